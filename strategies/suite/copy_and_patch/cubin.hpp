// Strategy 17's reading of a cubin: the ELF file nvcc writes, each kernel's machine code in a section
// .text.<kernel>, 16 bytes an instruction; and the fields of an instruction the engine reads and
// writes: the registers, the 32-bit immediate, and the scheduling bits (the stall before the next
// instruction issues, the operand reuse flags). Where those fields lie is CuAssembler's description
// of Volta to Hopper; the learning (learn.cpp) checks each against what nvcc wrote rather than
// trusting it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cdl::copy_and_patch::patch {

using bytes = std::vector<unsigned char>;
using insn = std::array<unsigned char, 16>;

struct kernel_code {
  std::size_t offset = 0, count = 0;  // where its instructions start in the file, how many
};
struct section {
  std::size_t offset = 0, size = 0;  // in the file, in bytes
};
// The file's sections by name; a file that is no 64-bit ELF file is refused.
std::map<std::string, section> sections_of(const bytes& elf);
// Each kernel's machine code, by its name.
std::map<std::string, kernel_code> kernels_of(const bytes& elf);
// A kernel's instructions as the section of the file they fill.
inline section text_of(const kernel_code& k) { return {k.offset, 16 * k.count}; }
// The instruction at a file offset.
insn at(const bytes& f, std::size_t offset);
bytes read_file(const std::string& path);

// One instruction's fields: register numbers at bytes 2 (written), 3 and 4 (read) or an immediate
// at 4-7; the scheduling bits in 13-15.
inline constexpr int dest_field = 2;
inline std::uint32_t immediate(const insn& i) {
  return i[4] | i[5] << 8 | i[6] << 16 | std::uint32_t(i[7]) << 24;
}
inline void set_immediate(insn& i, std::uint32_t v) {
  for (int b = 0; b < 4; ++b) i[4 + b] = (unsigned char)(v >> 8 * b);
}
inline int stall(const unsigned char* i) { return (i[13] >> 1) & 15; }  // cycles before the next issues
inline int stall(const insn& i) { return stall(i.data()); }
inline void set_stall(unsigned char* i, int cycles) {
  i[13] = (unsigned char)((i[13] & ~0x1e) | ((cycles < 15 ? cycles : 15) << 1));
}
inline void clear_reuse(unsigned char* i) { i[15] &= (unsigned char)~0x3c; }  // no operand kept for the next
// An instruction's operation, without its predicate and operands: the low 12 bits.
inline int opcode(const insn& i) { return i[0] | (i[1] & 15) << 8; }

// Whether byte f of operation o's instruction holds one of its operands: bytes 2 and 3, then 4-7 (a
// constant) or 4 (a second register), and 8 (fmac's addend, the other factor of
// fmar and fnmar or their first, a three-register operation's third).
bool operand_field(int o, int f);
// Whether a and b are the same instruction of operation o but for its registers (and its constant).
bool same_but_operands(const insn& a, const insn& b, int o);

}  // namespace cdl::copy_and_patch::patch
