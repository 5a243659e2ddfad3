// Runs the fuzz target without libFuzzer (a gcc build): pseudo-random inputs
// for a fixed budget, or given files replayed once each (a libFuzzer corpus or
// crash file).
//
//   silu_grad_fuzz [--seconds S] [--runs N] [--seed K] [--max-len L] [--case I] [FILE...]
//
// Input i of seed K is a pure function of (K, i), so a failing case prints how
// to rerun just it. Exit status 0 when every case passed.
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_target.h"


// Sanitizer reports end in abort(), so OnSignal names the failing case
// (gcc's UBSan runtime does not call ASan's death callbacks).
extern "C" const char* __asan_default_options() { return "abort_on_error=1:detect_leaks=1"; }
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:print_stacktrace=1"; }

namespace {

uint64_t seed = 1;
int64_t case_index = -1;              // the generated input being run, or
const char* case_file = nullptr;      // the file being replayed: for the failure report

void ReportCase() {
  if (case_file != nullptr) {
    std::fprintf(stderr, "fuzz case failed: input file %s\n", case_file);
  } else if (case_index >= 0) {
    std::fprintf(stderr, "fuzz case failed: rerun with --seed %llu --case %lld\n",
                 static_cast<unsigned long long>(seed), static_cast<long long>(case_index));
  }
  std::fflush(stderr);
}

extern "C" void OnSignal(int sig) {
  ReportCase();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::vector<uint8_t> MakeInput(uint64_t index, size_t max_len) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + index);
  // Mostly short inputs (plain calls with a few twists), sometimes long ones.
  const size_t len = rng() % 4 == 0 ? rng() % (max_len + 1) : rng() % (max_len / 4 + 1);
  std::vector<uint8_t> bytes(len);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

int Usage() {
  std::fprintf(stderr, "usage: silu_grad_fuzz [--seconds S] [--runs N] [--seed K] [--max-len L] [--case I] [FILE...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  int64_t runs = -1, only_case = -1;
  size_t max_len = 512;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seconds" && has_value) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--runs" && has_value) {
      runs = std::atoll(argv[++i]);
    } else if (a == "--seed" && has_value) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--max-len" && has_value) {
      max_len = static_cast<size_t>(std::atoll(argv[++i]));
    } else if (a == "--case" && has_value) {
      only_case = std::atoll(argv[++i]);
    } else if (a.rfind("--", 0) == 0) {
      return Usage();
    } else {
      files.push_back(a);
    }
  }
  std::signal(SIGABRT, OnSignal);
  std::signal(SIGSEGV, OnSignal);

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (!files.empty()) {
    for (const std::string& f : files) {
      std::ifstream in(f, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "cannot read %s\n", f.c_str());
        return 2;
      }
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      case_file = f.c_str();
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    }
  } else if (only_case >= 0) {
    case_index = only_case;
    const std::vector<uint8_t> bytes = MakeInput(static_cast<uint64_t>(only_case), max_len);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  } else {
    if (runs < 0 && seconds <= 0) runs = 10000;
    for (int64_t i = 0; (runs < 0 || i < runs) && (seconds <= 0 || elapsed() < seconds); ++i) {
      case_index = i;
      const std::vector<uint8_t> bytes = MakeInput(static_cast<uint64_t>(i), max_len);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    }
  }
  case_index = -1;
  case_file = nullptr;
  const std::string source = files.empty() ? "seed " + std::to_string(seed) : "input files";
  const jas::fuzz::Tallies& t = jas::fuzz::GetTallies();
  std::printf(
      "fuzz: %lld cases in %.1f s (%s): phase 1 accepted %lld, 161001 %lld, 161002 %lld; "
      "phase 2 called %lld times, %lld runs checked element by element (%lld elements, %lld reruns of "
      "repeatable executors); no finding\n",
      static_cast<long long>(t.cases), elapsed(), source.c_str(),
      static_cast<long long>(t.phase1_success), static_cast<long long>(t.phase1_null),
      static_cast<long long>(t.phase1_invalid), static_cast<long long>(t.phase2_calls),
      static_cast<long long>(t.phase2_checked), static_cast<long long>(t.elements_checked),
      static_cast<long long>(t.repeat_runs));
  return 0;
}
