// append_metadata: turns a shared library into a DuckDB extension file by appending
// DuckDB's extension metadata footer.
//
//   append_metadata IN.so OUT.duckdb_extension [--platform linux_amd64]
//                   [--capi-version v1.2.0] [--extension-version v0.1.0]
//
// DuckDB reads the last 512 bytes of an extension file: eight 32-byte, NUL-padded
// fields stored last-field-first, then a 256-byte signature (zeros: unsigned). Read in
// order the fields are: the magic value "4", the platform, the C API version (for the
// C_STRUCT ABI: the oldest DuckDB C API the extension needs), the extension version, the
// ABI type, and three unused fields. Before the footer we write the 22-byte WebAssembly
// custom-section header DuckDB's own tooling writes on every platform
// ("duckdb_signature", 512 bytes of payload), so the file looks like DuckDB's own
// extensions byte for byte. Re-running on a file that already has a footer replaces it.
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr size_t kFieldSize = 32;
constexpr size_t kFieldCount = 8;
constexpr size_t kSignatureSize = 256;
constexpr size_t kFooterSize = kFieldSize * kFieldCount + kSignatureSize;  // 512
// Custom section id 0, section length 531 (LEB128), name length 16, the name, payload
// length 512 (LEB128).
constexpr char kWasmHeader[] =
    "\x00\x93\x04\x10"
    "duckdb_signature"
    "\x80\x04";
constexpr size_t kWasmHeaderSize = sizeof(kWasmHeader) - 1;  // 22

bool Field(const std::string& value, std::string* out) {
  if (value.size() > kFieldSize) return false;
  std::string f = value;
  f.resize(kFieldSize, '\0');
  *out += f;
  return true;
}

// True when `data` already ends with a footer this tool (or DuckDB's) wrote.
bool HasFooter(const std::vector<char>& data) {
  if (data.size() < kFooterSize + kWasmHeaderSize) return false;
  const char* footer = data.data() + data.size() - kFooterSize;
  const char* magic = footer + (kFieldCount - 1) * kFieldSize;  // field 0 is stored last
  return magic[0] == '4' &&
         std::memcmp(footer - kWasmHeaderSize, kWasmHeader, kWasmHeaderSize) == 0;
}

int Usage() {
  std::cerr << "usage: append_metadata IN OUT [--platform P] [--capi-version vX.Y.Z]"
               " [--extension-version V]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  std::string in_path = argv[1], out_path = argv[2];
  std::string platform = "linux_amd64", capi = "v1.2.0", version = "v0.1.0";
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return Usage();
    if (a == "--platform")
      platform = argv[++i];
    else if (a == "--capi-version")
      capi = argv[++i];
    else if (a == "--extension-version")
      version = argv[++i];
    else
      return Usage();
  }

  std::ifstream in(in_path, std::ios::binary);
  if (!in) {
    std::cerr << "append_metadata: cannot read " << in_path << "\n";
    return 1;
  }
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (HasFooter(data)) data.resize(data.size() - kFooterSize - kWasmHeaderSize);

  // Fields in reading order; written last-first.
  const std::array<std::string, kFieldCount> fields = {"4",        platform, capi, version,
                                                       "C_STRUCT", "",       "",   ""};
  std::string footer(kWasmHeader, kWasmHeaderSize);
  for (size_t i = kFieldCount; i-- > 0;) {
    if (!Field(fields[i], &footer)) {
      std::cerr << "append_metadata: field longer than 32 bytes: " << fields[i] << "\n";
      return 1;
    }
  }
  footer.append(kSignatureSize, '\0');

  std::string tmp = out_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.write(footer.data(), static_cast<std::streamsize>(footer.size()));
    if (!out) {
      std::cerr << "append_metadata: cannot write " << tmp << "\n";
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    std::cerr << "append_metadata: cannot rename " << tmp << " to " << out_path << "\n";
    return 1;
  }
  return 0;
}
