//! The running kernel's own description of its types (BTF, `/sys/kernel/btf/vmlinux`), read
//! for the few facts the raw-tracepoint programs need: where a field lies in `struct request`,
//! `struct bio` and `struct block_device`, and in which argument a tracepoint passes which
//! pointer. This is what CO-RE relocation does inside libbpf, done here at start so the
//! programs can be emitted with this kernel's offsets (`include/uapi/linux/btf.h` for the
//! format; `Documentation/bpf/btf.rst`).

use std::path::Path;

/// Where the kernel publishes its BTF.
pub const VMLINUX: &str = "/sys/kernel/btf/vmlinux";

const MAGIC: u16 = 0xeb9f;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Ptr,
    Array,
    Struct,
    Union,
    Enum,
    Fwd,
    Typedef,
    Volatile,
    Const,
    Restrict,
    Func,
    FuncProto,
    Var,
    Datasec,
    Float,
    DeclTag,
    TypeTag,
    Enum64,
}

impl Kind {
    fn of(n: u32) -> Option<Kind> {
        Some(match n {
            1 => Kind::Int,
            2 => Kind::Ptr,
            3 => Kind::Array,
            4 => Kind::Struct,
            5 => Kind::Union,
            6 => Kind::Enum,
            7 => Kind::Fwd,
            8 => Kind::Typedef,
            9 => Kind::Volatile,
            10 => Kind::Const,
            11 => Kind::Restrict,
            12 => Kind::Func,
            13 => Kind::FuncProto,
            14 => Kind::Var,
            15 => Kind::Datasec,
            16 => Kind::Float,
            17 => Kind::DeclTag,
            18 => Kind::TypeTag,
            19 => Kind::Enum64,
            _ => return None,
        })
    }
}

/// One type: its kind, name, size (or the type it refers to) and its members or parameters
/// as (name offset, type id, bit offset).
#[derive(Debug, Clone)]
struct Type {
    kind: Kind,
    name_off: u32,
    /// `size` for ints, structs, unions, enums; the referred type for pointers, typedefs,
    /// modifiers, functions and function prototypes (the return type).
    size_or_type: u32,
    members: Vec<(u32, u32, u32)>,
}

/// Why BTF could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BtfError {
    #[error("reading {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{0}: not BTF (bad header or a type of unknown kind)")]
    Format(String),
}

/// The kernel's types, parsed.
#[derive(Debug)]
pub struct Btf {
    /// Index 0 is `void`; ids count from 1.
    types: Vec<Type>,
    strings: Vec<u8>,
}

/// A field: its byte offset and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub offset: usize,
    pub size: usize,
}

/// What a tracepoint argument is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// A pointer to `struct <name>`.
    StructPtr(String),
    /// A value of the named type (a typedef's or an int's name): `blk_status_t`,
    /// `unsigned int`.
    Value(String),
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

impl Btf {
    /// Reads and parses `path` (normally [`VMLINUX`]).
    pub fn load(path: &Path) -> Result<Btf, BtfError> {
        let bytes = std::fs::read(path).map_err(|error| BtfError::Read {
            path: path.display().to_string(),
            error,
        })?;
        Btf::parse(&bytes).ok_or_else(|| BtfError::Format(path.display().to_string()))
    }

    /// Parses BTF bytes (little-endian, as on every host this crate builds for).
    pub fn parse(b: &[u8]) -> Option<Btf> {
        if b.len() < 24 || u16::from_le_bytes([b[0], b[1]]) != MAGIC {
            return None;
        }
        let hdr_len = u32_at(b, 4)? as usize;
        let (type_off, type_len) = (u32_at(b, 8)? as usize, u32_at(b, 12)? as usize);
        let (str_off, str_len) = (u32_at(b, 16)? as usize, u32_at(b, 20)? as usize);
        let types_bytes = b.get(hdr_len + type_off..hdr_len + type_off + type_len)?;
        let strings = b
            .get(hdr_len + str_off..hdr_len + str_off + str_len)?
            .to_vec();
        let mut types = vec![Type {
            kind: Kind::Int,
            name_off: 0,
            size_or_type: 0,
            members: Vec::new(),
        }];
        let mut at = 0;
        while at < types_bytes.len() {
            let name_off = u32_at(types_bytes, at)?;
            let info = u32_at(types_bytes, at + 4)?;
            let size_or_type = u32_at(types_bytes, at + 8)?;
            at += 12;
            let kind = Kind::of((info >> 24) & 0x1f)?;
            let vlen = (info & 0xffff) as usize;
            let kind_flag = info >> 31 == 1;
            let mut members = Vec::new();
            match kind {
                Kind::Int | Kind::Var | Kind::DeclTag => at += 4,
                Kind::Array => at += 12,
                Kind::Struct | Kind::Union => {
                    for i in 0..vlen {
                        let m = at + 12 * i;
                        let off = u32_at(types_bytes, m + 8)?;
                        let bits = if kind_flag { off & 0x00ff_ffff } else { off };
                        members.push((u32_at(types_bytes, m)?, u32_at(types_bytes, m + 4)?, bits));
                    }
                    at += 12 * vlen;
                }
                Kind::Enum => at += 8 * vlen,
                Kind::Enum64 | Kind::Datasec => at += 12 * vlen,
                Kind::FuncProto => {
                    for i in 0..vlen {
                        let p = at + 8 * i;
                        members.push((u32_at(types_bytes, p)?, u32_at(types_bytes, p + 4)?, 0));
                    }
                    at += 8 * vlen;
                }
                Kind::Ptr
                | Kind::Fwd
                | Kind::Typedef
                | Kind::Volatile
                | Kind::Const
                | Kind::Restrict
                | Kind::Func
                | Kind::Float
                | Kind::TypeTag => {}
            }
            types.push(Type {
                kind,
                name_off,
                size_or_type,
                members,
            });
        }
        Some(Btf { types, strings })
    }

    fn name(&self, off: u32) -> &str {
        let s = self.strings.get(off as usize..).unwrap_or_default();
        let end = s.iter().position(|c| *c == 0).unwrap_or(s.len());
        std::str::from_utf8(&s[..end]).unwrap_or_default()
    }

    fn get(&self, id: u32) -> Option<&Type> {
        self.types.get(id as usize)
    }

    /// The first type of `kind` named `name`.
    fn find(&self, kind: Kind, name: &str) -> Option<u32> {
        self.types
            .iter()
            .position(|t| t.kind == kind && self.name(t.name_off) == name)
            .map(|i| i as u32)
    }

    /// Skips typedefs and modifiers.
    fn resolve(&self, mut id: u32) -> Option<u32> {
        for _ in 0..32 {
            let t = self.get(id)?;
            match t.kind {
                Kind::Typedef | Kind::Volatile | Kind::Const | Kind::Restrict | Kind::TypeTag => {
                    id = t.size_or_type
                }
                _ => return Some(id),
            }
        }
        None
    }

    /// Bytes a value of type `id` takes.
    fn size_of(&self, id: u32) -> Option<usize> {
        let t = self.get(self.resolve(id)?)?;
        match t.kind {
            Kind::Ptr => Some(8),
            Kind::Int | Kind::Struct | Kind::Union | Kind::Enum | Kind::Enum64 | Kind::Float => {
                Some(t.size_or_type as usize)
            }
            _ => None,
        }
    }

    /// Member `name` of the struct or union `id`, looking into anonymous members: (bit offset
    /// from the start of `id`, type).
    fn member_of(&self, id: u32, name: &str) -> Option<(u32, u32)> {
        let t = self.get(self.resolve(id)?)?;
        for &(n, ty, bits) in &t.members {
            if self.name(n) == name {
                return Some((bits, ty));
            }
        }
        for &(n, ty, bits) in &t.members {
            if n == 0 || self.name(n).is_empty() {
                let inner = self.get(self.resolve(ty)?)?;
                if matches!(inner.kind, Kind::Struct | Kind::Union) {
                    if let Some((b, t2)) = self.member_of(ty, name) {
                        return Some((bits + b, t2));
                    }
                }
            }
        }
        None
    }

    /// Where `struct <s>`'s field `path` lies (`["bi_iter", "bi_sector"]` follows an embedded
    /// struct); `None` when the struct or a field is missing or a field is a bitfield.
    pub fn field(&self, s: &str, path: &[&str]) -> Option<Member> {
        let mut id = self.find(Kind::Struct, s)?;
        let mut bits = 0;
        for name in path {
            let (b, ty) = self.member_of(id, name)?;
            bits += b;
            id = ty;
        }
        if bits % 8 != 0 {
            return None;
        }
        Some(Member {
            offset: (bits / 8) as usize,
            size: self.size_of(id)?,
        })
    }

    /// The arguments of tracepoint `name` as a raw tracepoint program sees them (`args[0]`
    /// first): from the `btf_trace_<name>` typedef, a pointer to a prototype whose first
    /// parameter (the probe's data) is left out.
    pub fn tracepoint_args(&self, name: &str) -> Option<Vec<Arg>> {
        let td = self.find(Kind::Typedef, &format!("btf_trace_{name}"))?;
        let ptr = self.get(self.resolve(td)?)?;
        if ptr.kind != Kind::Ptr {
            return None;
        }
        let proto = self.get(self.resolve(ptr.size_or_type)?)?;
        if proto.kind != Kind::FuncProto {
            return None;
        }
        let mut out = Vec::new();
        for &(_, ty, _) in proto.members.iter().skip(1) {
            out.push(self.arg(ty)?);
        }
        Some(out)
    }

    fn arg(&self, ty: u32) -> Option<Arg> {
        let t = self.get(ty)?;
        if t.kind == Kind::Typedef {
            return Some(Arg::Value(self.name(t.name_off).to_string()));
        }
        let r = self.get(self.resolve(ty)?)?;
        if r.kind == Kind::Ptr {
            let to = self.get(self.resolve(r.size_or_type)?)?;
            if matches!(to.kind, Kind::Struct | Kind::Fwd) {
                return Some(Arg::StructPtr(self.name(to.name_off).to_string()));
            }
            return Some(Arg::Value("pointer".into()));
        }
        Some(Arg::Value(self.name(r.name_off).to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made BTF blob: `struct s { int a; struct { long b; }; }` (b at 8 through an
    /// anonymous member), `typedef void (*btf_trace_t)(void *, struct s *, unsigned int)`.
    fn blob() -> Vec<u8> {
        let strings = b"\0s\0a\0b\0int\0long\0btf_trace_t\0unsigned int\0".to_vec();
        let name = |n: &str| {
            let pos = strings
                .windows(n.len() + 1)
                .position(|w| &w[..n.len()] == n.as_bytes() && w[n.len()] == 0)
                .unwrap();
            pos as u32
        };
        let mut t: Vec<u32> = Vec::new();
        let ty = |t: &mut Vec<u32>, name: u32, kind: u32, vlen: u32, sz: u32| {
            t.extend([name, (kind << 24) | vlen, sz]);
        };
        ty(&mut t, name("int"), 1, 0, 4); // 1: int
        t.push(32);
        ty(&mut t, name("long"), 1, 0, 8); // 2: long
        t.push(64);
        ty(&mut t, 0, 4, 1, 8); // 3: struct { long b; }
        t.extend([name("b"), 2, 0]);
        ty(&mut t, name("s"), 4, 2, 16); // 4: struct s
        t.extend([name("a"), 1, 0]);
        t.extend([0, 3, 64]);
        ty(&mut t, 0, 2, 0, 4); // 5: struct s *
        ty(&mut t, name("unsigned int"), 1, 0, 4); // 6
        t.push(32);
        ty(&mut t, 0, 13, 3, 0); // 7: proto (void *, struct s *, unsigned int)
        t.extend([0, 0, 0, 5, 0, 6]);
        ty(&mut t, 0, 2, 0, 7); // 8: pointer to the prototype
        ty(&mut t, name("btf_trace_t"), 8, 0, 8); // 9: the typedef
        let types: Vec<u8> = t.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut b = Vec::new();
        b.extend(MAGIC.to_le_bytes());
        b.extend([1u8, 0]);
        for w in [
            24u32,
            0,
            types.len() as u32,
            types.len() as u32,
            strings.len() as u32,
        ] {
            b.extend(w.to_le_bytes());
        }
        b.extend(types);
        b.extend(strings);
        b
    }

    #[test]
    fn a_field_is_found_through_an_anonymous_member_and_arguments_are_named() {
        let btf = Btf::parse(&blob()).unwrap();
        assert_eq!(btf.field("s", &["a"]), Some(Member { offset: 0, size: 4 }));
        assert_eq!(btf.field("s", &["b"]), Some(Member { offset: 8, size: 8 }));
        assert_eq!(btf.field("s", &["c"]), None);
        assert_eq!(
            btf.tracepoint_args("t"),
            Some(vec![
                Arg::StructPtr("s".into()),
                Arg::Value("unsigned int".into())
            ])
        );
        assert!(Btf::parse(b"not btf at all, not at all").is_none());
    }

    #[test]
    fn this_kernels_block_structures_are_found() {
        let Ok(btf) = Btf::load(Path::new(VMLINUX)) else {
            eprintln!("skipped: no readable {VMLINUX}");
            return;
        };
        let sector = btf
            .field("request", &["__sector"])
            .expect("request.__sector");
        assert_eq!(sector.size, 8);
        assert!(btf.field("bio", &["bi_iter", "bi_sector"]).is_some());
        assert_eq!(
            btf.tracepoint_args("block_rq_issue"),
            Some(vec![Arg::StructPtr("request".into())])
        );
    }
}
