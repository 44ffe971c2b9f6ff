//! A small typed eBPF assembler: the instructions the kernel view's programs use, built in Rust
//! and handed to `bpf(BPF_PROG_LOAD)` as they are, so the default build needs no clang, no
//! LLVM BPF target and no object file (the encoding is the kernel's
//! `Documentation/bpf/standardization/instruction-set.rst`).
//!
//! An [`Asm`] appends instructions; jumps name a [`Label`] that [`Asm::bind`] places later, and
//! [`Asm::finish`] resolves them (a label used and never bound is an error, not a wild jump).
//! The verifier still checks everything the kernel cares about (bounded offsets, null checks
//! after a map lookup, the 512-byte stack); this layer only gets the bits right.

/// One 8-byte instruction, as the kernel reads it (`struct bpf_insn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    /// `dst` in the low nibble, `src` in the high one.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    fn new(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: (dst as u8) | ((src as u8) << 4),
            off,
            imm,
        }
    }

    pub fn dst(&self) -> u8 {
        self.regs & 0x0f
    }

    pub fn src(&self) -> u8 {
        self.regs >> 4
    }

    /// The instruction in the kernel's byte order (little-endian hosts only: the fields are
    /// native-endian and the register nibbles are in `bpf_insn`'s little-endian bit order).
    pub fn to_bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = self.regs;
        b[2..4].copy_from_slice(&self.off.to_ne_bytes());
        b[4..8].copy_from_slice(&self.imm.to_ne_bytes());
        b
    }
}

/// The eleven registers: r0 the return value and a helper's result, r1-r5 a helper's
/// arguments (clobbered by every call), r6-r9 kept across calls, r10 the read-only frame
/// pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Reg {
    R0 = 0,
    R1,
    R2,
    R3,
    R4,
    R5,
    R6,
    R7,
    R8,
    R9,
    R10,
}

/// Operand widths of loads and stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// 1 byte.
    B,
    /// 2 bytes.
    H,
    /// 4 bytes.
    W,
    /// 8 bytes.
    DW,
}

impl Size {
    const fn bits(self) -> u8 {
        match self {
            Size::W => 0x00,
            Size::H => 0x08,
            Size::B => 0x10,
            Size::DW => 0x18,
        }
    }

    /// The width of a field of `bytes` bytes, if a load can take it whole.
    pub fn of_bytes(bytes: usize) -> Option<Size> {
        match bytes {
            1 => Some(Size::B),
            2 => Some(Size::H),
            4 => Some(Size::W),
            8 => Some(Size::DW),
            _ => None,
        }
    }
}

/// 64-bit arithmetic operations (`BPF_ALU64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alu {
    Add = 0x00,
    Sub = 0x10,
    Mul = 0x20,
    Or = 0x40,
    And = 0x50,
    Lsh = 0x60,
    Rsh = 0x70,
    Xor = 0xa0,
    Mov = 0xb0,
}

/// Conditional jumps (`BPF_JMP`, 64-bit unsigned compares unless named signed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    Eq = 0x10,
    /// Unsigned `>`.
    Gt = 0x20,
    /// Unsigned `>=`.
    Ge = 0x30,
    Ne = 0x50,
    /// Unsigned `<`.
    Lt = 0xa0,
    /// Unsigned `<=`.
    Le = 0xb0,
}

/// Kernel helper functions the programs call (`enum bpf_func_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Helper {
    MapLookupElem = 1,
    MapUpdateElem = 2,
    MapDeleteElem = 3,
    KtimeGetNs = 5,
    GetCurrentPidTgid = 14,
}

const CLASS_LD: u8 = 0x00;
const CLASS_LDX: u8 = 0x01;
const CLASS_ST: u8 = 0x02;
const CLASS_STX: u8 = 0x03;
const CLASS_ALU: u8 = 0x04;
const CLASS_JMP: u8 = 0x05;
const CLASS_JMP32: u8 = 0x06;
const CLASS_ALU64: u8 = 0x07;
const MODE_IMM: u8 = 0x00;
const MODE_MEM: u8 = 0x60;
const MODE_ATOMIC: u8 = 0xc0;
const SRC_K: u8 = 0x00;
const SRC_X: u8 = 0x08;
const OP_JA: u8 = 0x00;
const OP_CALL: u8 = 0x80;
const OP_EXIT: u8 = 0x90;
/// `src_reg` of a 64-bit immediate load that names a map by its descriptor.
pub const PSEUDO_MAP_FD: u8 = 1;

/// A place in the program a jump can go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label(usize);

/// Why a program could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("eBPF assembly: label {0} is jumped to but never placed")]
    Unbound(usize),
    #[error("eBPF assembly: a jump of {0} instructions does not fit an instruction's offset")]
    TooFar(i64),
}

/// Instructions being written, with the jumps still to resolve.
#[derive(Debug, Default)]
pub struct Asm {
    insns: Vec<Insn>,
    /// Each label's instruction index once bound.
    labels: Vec<Option<usize>>,
    /// (index of a jump instruction, the label it goes to).
    fixups: Vec<(usize, Label)>,
}

impl Asm {
    pub fn new() -> Asm {
        Asm::default()
    }

    fn push(&mut self, i: Insn) -> &mut Asm {
        self.insns.push(i);
        self
    }

    /// A new label, not yet placed.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Places `l` at the next instruction.
    pub fn bind(&mut self, l: Label) -> &mut Asm {
        self.labels[l.0] = Some(self.insns.len());
        self
    }

    /// `dst = op(dst, imm)` on 64 bits (the immediate is sign-extended).
    pub fn alu_imm(&mut self, op: Alu, dst: Reg, imm: i32) -> &mut Asm {
        self.push(Insn::new(
            CLASS_ALU64 | SRC_K | op as u8,
            dst,
            Reg::R0,
            0,
            imm,
        ))
    }

    /// `dst = op(dst, src)` on 64 bits.
    pub fn alu_reg(&mut self, op: Alu, dst: Reg, src: Reg) -> &mut Asm {
        self.push(Insn::new(CLASS_ALU64 | SRC_X | op as u8, dst, src, 0, 0))
    }

    /// `dst = imm` (sign-extended).
    pub fn mov_imm(&mut self, dst: Reg, imm: i32) -> &mut Asm {
        self.alu_imm(Alu::Mov, dst, imm)
    }

    /// `dst = imm` as 32 bits, zero-extended (for a constant past `i32::MAX` read as `u32`,
    /// such as a device number).
    pub fn mov32_imm(&mut self, dst: Reg, imm: u32) -> &mut Asm {
        self.push(Insn::new(
            CLASS_ALU | SRC_K | Alu::Mov as u8,
            dst,
            Reg::R0,
            0,
            imm as i32,
        ))
    }

    /// `dst = src`.
    pub fn mov(&mut self, dst: Reg, src: Reg) -> &mut Asm {
        self.alu_reg(Alu::Mov, dst, src)
    }

    /// `dst = *(size *)(src + off)`, zero-extended.
    pub fn load(&mut self, size: Size, dst: Reg, src: Reg, off: i16) -> &mut Asm {
        self.push(Insn::new(
            CLASS_LDX | MODE_MEM | size.bits(),
            dst,
            src,
            off,
            0,
        ))
    }

    /// `*(size *)(dst + off) = src`.
    pub fn store(&mut self, size: Size, dst: Reg, off: i16, src: Reg) -> &mut Asm {
        self.push(Insn::new(
            CLASS_STX | MODE_MEM | size.bits(),
            dst,
            src,
            off,
            0,
        ))
    }

    /// `*(size *)(dst + off) = imm`.
    pub fn store_imm(&mut self, size: Size, dst: Reg, off: i16, imm: i32) -> &mut Asm {
        self.push(Insn::new(
            CLASS_ST | MODE_MEM | size.bits(),
            dst,
            Reg::R0,
            off,
            imm,
        ))
    }

    /// `*(u64 *)(dst + off) += src`, atomically (`lock xadd`).
    pub fn atomic_add(&mut self, dst: Reg, off: i16, src: Reg) -> &mut Asm {
        self.push(Insn::new(
            CLASS_STX | MODE_ATOMIC | Size::DW.bits(),
            dst,
            src,
            off,
            0,
        ))
    }

    /// `dst = imm` for any 64-bit constant (two instruction slots).
    pub fn load_imm64(&mut self, dst: Reg, imm: u64) -> &mut Asm {
        self.push(Insn::new(
            CLASS_LD | MODE_IMM | Size::DW.bits(),
            dst,
            Reg::R0,
            0,
            imm as u32 as i32,
        ));
        self.push(Insn {
            code: 0,
            regs: 0,
            off: 0,
            imm: (imm >> 32) as u32 as i32,
        })
    }

    /// `dst = the map whose descriptor is fd` (two instruction slots).
    pub fn load_map_fd(&mut self, dst: Reg, fd: i32) -> &mut Asm {
        let mut first = Insn::new(CLASS_LD | MODE_IMM | Size::DW.bits(), dst, Reg::R0, 0, fd);
        first.regs |= PSEUDO_MAP_FD << 4;
        self.push(first);
        self.push(Insn {
            code: 0,
            regs: 0,
            off: 0,
            imm: 0,
        })
    }

    fn jump_to(&mut self, code: u8, dst: Reg, src: Reg, imm: i32, to: Label) -> &mut Asm {
        self.fixups.push((self.insns.len(), to));
        self.push(Insn::new(code, dst, src, 0, imm))
    }

    /// `if dst <cond> imm goto to` (the immediate sign-extended to 64 bits).
    pub fn jump_imm(&mut self, cond: Cond, dst: Reg, imm: i32, to: Label) -> &mut Asm {
        self.jump_to(CLASS_JMP | SRC_K | cond as u8, dst, Reg::R0, imm, to)
    }

    /// `if (u32)dst <cond> imm goto to`: compares the low 32 bits only (`BPF_JMP32`), so a
    /// `u32` constant past `i32::MAX` compares as itself, not sign-extended.
    pub fn jump32_imm(&mut self, cond: Cond, dst: Reg, imm: u32, to: Label) -> &mut Asm {
        self.jump_to(
            CLASS_JMP32 | SRC_K | cond as u8,
            dst,
            Reg::R0,
            imm as i32,
            to,
        )
    }

    /// `if dst <cond> src goto to`.
    pub fn jump_reg(&mut self, cond: Cond, dst: Reg, src: Reg, to: Label) -> &mut Asm {
        self.jump_to(CLASS_JMP | SRC_X | cond as u8, dst, src, 0, to)
    }

    /// `goto to`.
    pub fn jump(&mut self, to: Label) -> &mut Asm {
        self.jump_to(CLASS_JMP | OP_JA, Reg::R0, Reg::R0, 0, to)
    }

    /// Calls a kernel helper: arguments in r1-r5, result in r0; r1-r5 are clobbered.
    pub fn call(&mut self, h: Helper) -> &mut Asm {
        self.push(Insn::new(
            CLASS_JMP | OP_CALL,
            Reg::R0,
            Reg::R0,
            0,
            h as i32,
        ))
    }

    /// Calls the kernel helper numbered `id` (one [`Helper`] does not name).
    pub fn push_call(&mut self, id: i32) -> &mut Asm {
        self.push(Insn::new(CLASS_JMP | OP_CALL, Reg::R0, Reg::R0, 0, id))
    }

    /// Returns r0.
    pub fn exit(&mut self) -> &mut Asm {
        self.push(Insn::new(CLASS_JMP | OP_EXIT, Reg::R0, Reg::R0, 0, 0))
    }

    /// The program, its jumps resolved.
    pub fn finish(mut self) -> Result<Vec<Insn>, AsmError> {
        for (at, label) in std::mem::take(&mut self.fixups) {
            let target = self.labels[label.0].ok_or(AsmError::Unbound(label.0))?;
            let rel = target as i64 - at as i64 - 1;
            self.insns[at].off = i16::try_from(rel).map_err(|_| AsmError::TooFar(rel))?;
        }
        Ok(self.insns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_encode_as_the_kernel_reads_them() {
        let mut a = Asm::new();
        let out = a.label();
        a.mov_imm(Reg::R0, 0)
            .load(Size::W, Reg::R1, Reg::R6, 8)
            .jump_imm(Cond::Ne, Reg::R1, 7, out)
            .atomic_add(Reg::R7, 16, Reg::R1)
            .load_map_fd(Reg::R1, 5)
            .bind(out)
            .exit();
        let p = a.finish().unwrap();
        // mov64 r0, 0
        assert_eq!(p[0].to_bytes(), [0xb7, 0x00, 0, 0, 0, 0, 0, 0]);
        // ldxw r1, [r6+8]
        assert_eq!(p[1].to_bytes(), [0x61, 0x61, 8, 0, 0, 0, 0, 0]);
        // jne r1, 7, +3 (over the xadd and the two slots of lddw)
        assert_eq!(p[2].to_bytes(), [0x55, 0x01, 3, 0, 7, 0, 0, 0]);
        // lock *(u64 *)(r7 + 16) += r1
        assert_eq!(p[3].to_bytes(), [0xdb, 0x17, 16, 0, 0, 0, 0, 0]);
        // lddw r1, map fd 5 (src_reg 1: a map's descriptor)
        assert_eq!(p[4].to_bytes(), [0x18, 0x11, 0, 0, 5, 0, 0, 0]);
        assert_eq!(p[5].to_bytes(), [0; 8]);
        assert_eq!(p[6].to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!((p[1].dst(), p[1].src()), (1, 6));
    }

    #[test]
    fn a_label_never_placed_is_an_error() {
        let mut a = Asm::new();
        let nowhere = a.label();
        a.jump(nowhere).exit();
        assert_eq!(a.finish(), Err(AsmError::Unbound(0)));
    }
}
