// cubin.hpp's reading of the ELF file and of an instruction's operands. Read the header first.
#include "strategies/suite/copy_and_patch/cubin.hpp"

#include "strategies/suite/copy_and_patch/stencils.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace cdl::copy_and_patch::patch {

std::map<std::string, section> sections_of(const bytes& elf) {
  auto u16 = [&](std::size_t at) { return std::uint16_t(elf.at(at) | elf.at(at + 1) << 8); };
  auto u32 = [&](std::size_t at) { return std::uint32_t(u16(at) | std::uint32_t(u16(at + 2)) << 16); };
  auto u64 = [&](std::size_t at) { return std::uint64_t(u32(at)) | std::uint64_t(u32(at + 4)) << 32; };
  if (elf.size() < 64 || elf[0] != 0x7f || elf[1] != 'E' || elf[4] != 2)
    throw std::runtime_error("not a 64-bit ELF file: not a cubin");
  const std::uint64_t shoff = u64(0x28);
  const unsigned shentsize = u16(0x3a), shnum = u16(0x3c), names = u16(0x3e);
  const std::uint64_t strings = u64(shoff + names * shentsize + 0x18);
  std::map<std::string, section> out;
  for (unsigned s = 0; s < shnum; ++s) {
    const std::size_t h = shoff + s * shentsize;
    out[std::string(reinterpret_cast<const char*>(&elf.at(strings + u32(h))))] = {std::size_t(u64(h + 0x18)),
                                                                                  std::size_t(u64(h + 0x20))};
  }
  return out;
}
std::map<std::string, kernel_code> kernels_of(const bytes& elf) {
  std::map<std::string, kernel_code> out;
  for (const auto& [name, where] : sections_of(elf))
    if (name.rfind(".text.", 0) == 0) out[name.substr(6)] = {where.offset, where.size / 16};
  return out;
}

bool operand_field(int o, int f) {
  if (f == dest_field || f == 3) return true;
  if (f >= 4 && f <= 7) return stencil::has_constant(o) || (f == 4 && stencil::registers_read(o) >= 2);
  return f == 8 &&
         (o == stencil::fmac || o == stencil::fmar || o == stencil::fnmar || stencil::registers_read(o) == 3);
}
bool same_but_operands(const insn& a, const insn& b, int o) {
  for (int f = 0; f < 13; ++f)
    if (a[f] != b[f] && !operand_field(o, f)) return false;
  return true;
}
insn at(const bytes& f, std::size_t offset) {
  insn i;
  std::copy_n(f.begin() + std::ptrdiff_t(offset), 16, i.begin());
  return i;
}
bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw std::runtime_error("cannot read " + path + " (the build writes it: strategies/CMakeLists.txt)");
  bytes file(std::size_t(in.tellg()));
  in.seekg(0).read(reinterpret_cast<char*>(file.data()), std::streamsize(file.size()));
  return file;
}

}  // namespace cdl::copy_and_patch::patch
