# mentat: the two set-up commands are `make demo` and `make test` (see README.md).
BUILD ?= build
JOBS ?= 2
DEB_PACKAGES := g++ cmake ninja-build pkg-config libsqlite3-dev sqlite3 nlohmann-json3-dev \
                libgtest-dev libgmock-dev libbenchmark-dev libreadline-dev python3

.PHONY: deps build demo test clean format

# Installs the Debian packages that are missing (only those; apt-get update first).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash tools/demo.sh $(BUILD)/mentat

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

clean:
	rm -rf $(BUILD)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')
