# mentat: the two set-up commands are `make demo` and `make test` (see README.md).
BUILD ?= build
JOBS ?= 2
DEB_PACKAGES := g++ cmake ninja-build pkg-config libsqlite3-dev sqlite3 nlohmann-json3-dev \
                libgtest-dev libgmock-dev libbenchmark-dev libreadline-dev libre2-dev libicu-dev python3 \
                libpq-dev postgresql-15 libcpp-httplib-dev libssl-dev openssl curl \
                clang-format

.PHONY: deps build demo test clean format format-check install package

# Installs the Debian packages that are missing (only those; apt-get update first).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# The development build: the library, the CLI and both extensions, with the tests and
# the benchmarks (a plain `cmake -S . -B DIR` builds the library, the CLI and the SQLite
# extension only; doc/install.md).
DEV_OPTIONS := -DMENTAT_TESTS=ON -DMENTAT_BENCHMARKS=ON -DMENTAT_DUCKDB=ON
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(DEV_OPTIONS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash tools/demo.sh $(BUILD)/mentat

test: build format-check
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600
	$(MAKE) --no-print-directory test-asan-ci

clean:
	rm -rf $(BUILD)

# Installs the library, headers, pkg-config and CMake files, the CLI, the extensions, the
# man page and the Python package under PREFIX (doc/install.md).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# A Debian package of what `make install` installs, into $(BUILD)/mentat_<version>_amd64.deb.
package: build
	cd $(BUILD) && cpack -G DEB

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

# Every C++ source as .clang-format has it (part of `make test`, so of CI): a file that is
# not fails the test command with clang-format's report of where.
format-check: deps
	@files=$$(git ls-files '*.cc' '*.h' 2>/dev/null || find include src ext test benchmarks tools \( -name '*.cc' -o -name '*.h' \) -not -path '*/node_modules/*'); \
	clang-format --dry-run -Werror $$files && echo "format-check: $$(echo $$files | wc -w) files formatted"

# ---- Reliability (doc/reliability.md): sanitizers, fuzzing, stress ----
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
STRESS_SECONDS ?= 120
FUZZ_DEB_PACKAGES := clang libclang-rt-14-dev

.PHONY: test-asan test-asan-ci test-tsan fuzz stress

BUILD_ASAN_CI ?= build-asan-ci
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# The sanitizer step of `make test` (and so of CI): the library, the unit tests, the
# data-driven tests through the library (datadriven_lib, and on PostgreSQL: datadriven_pg),
# the PostgreSQL tests (pg_tests), the reliability tests and the fuzz replays, built
# with AddressSanitizer (Debug, -O0, line tables: -O1 takes 1.6x as long to compile, more
# than its faster tests give back) and run; no
# extensions and no CLI golden tests (those run in the normal build above). ASan only:
# with gcc, UBSan more than doubles the compile time, which CI cannot afford; `make
# test-asan` runs everything under ASan + UBSan. The schema race runs 10 s here (30 s in
# the normal build above). See doc/reliability.md "Sanitizers".
test-asan-ci:
	cmake -S . -B $(BUILD_ASAN_CI) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMENTAT_TESTS=ON -DMENTAT_BENCHMARKS=OFF -DMENTAT_SANITIZE=OFF \
	  "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O0 -g1" \
	  "-DCMAKE_CXX_FLAGS=-fsanitize=address -fno-omit-frame-pointer" \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address \
	  >/dev/null
	cmake --build $(BUILD_ASAN_CI) -j $(JOBS) --target unit_tests mentat-test-runner \
	  reliability_tests reliability_worker mentat_cli pg_tests \
	  $(patsubst fuzz/%.cc,%_replay,$(wildcard fuzz/*_fuzz.cc))
	cd $(BUILD_ASAN_CI) && $(ASAN_ENV) MENTAT_SCHEMA_RACE_MILLIS=10000 ctest --output-on-failure -j $(JOBS) --timeout 1200 \
	  -R '^(reliability\.|datadriven_lib$$|datadriven_pg$$|pg\.cluster\.|Pg|StoragePg|StorePg)' \
	  -E '(sqlite|duckdb)_ext'
	$(ASAN_ENV) $(BUILD_ASAN_CI)/test/unit_tests --gtest_brief=1

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMENTAT_SANITIZE=ON \
	  -DMENTAT_TESTS=ON -DMENTAT_DUCKDB=ON -DMENTAT_BENCHMARKS=OFF "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1"
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 1200

# The concurrency tests (reliability and store unit tests) under ThreadSanitizer.
test-tsan: deps
	cmake -S . -B $(BUILD_TSAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DMENTAT_TESTS=ON -DMENTAT_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS=-fsanitize=thread \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target reliability_tests reliability_worker unit_tests
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(BUILD_TSAN)/test/reliability/reliability_tests --gtest_filter='Concurrency.*'
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(BUILD_TSAN)/test/unit_tests --gtest_filter='*Concurren*:*Reader*:*Writer*:*Interrupt*'

# Each libFuzzer target for FUZZ_SECONDS (clang, ASan + UBSan); see fuzz/README.md.
fuzz: deps
	@missing=""; for p in $(FUZZ_DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	cmake -S fuzz -B $(BUILD_FUZZ) -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	cmake --build $(BUILD_FUZZ) -j $(JOBS)
	python3 fuzz/build_corpus.py --out $(BUILD_FUZZ)/corpus
	bash fuzz/run.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

# The reliability tests run long: more kills, longer concurrency, more damaged files.
stress: build
	MENTAT_CRASH_ITERATIONS=400 MENTAT_STRESS_MILLIS=$$(( $(STRESS_SECONDS) * 1000 )) \
	  MENTAT_STRESS_PROCESSES=4 MENTAT_DAMAGE_ROUNDS=1000 \
	  $(BUILD)/test/reliability/reliability_tests
