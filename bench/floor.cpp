// floor: the time to walk a `terraform show -json` plan's resource_changes,
// reading each entry's actions and shard counts, with simdjson (Debian's
// libsimdjson-dev), as a lower bound for `shardgate check`. The whole-process
// benchmark (cmd/shardgate-bench) builds it with
//
//   g++ -O2 -std=c++17 -o floor bench/floor.cpp -lsimdjson
//
// and times it beside `shardgate check` and conftest on the same plans. It
// reads what shardgate must read to judge a plan and nothing more: the
// entries' type, name and actions, and the shard_count of `input` before and
// after; then prints counts (so no step can be optimised away) and exits 0, or
// 2 with a one-line reason on a file it cannot read or parse. To be a floor it
// leaves the kernel as little to do as it can: the plan is mapped, not copied,
// and the parser's document-sized buffers get huge pages (see map_padded and
// allocate below).
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <cstdio>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <simdjson.h>

namespace {

// Large blocks (the parser's structural index and string buffer, sized by the
// document) come from their own mappings advised to use transparent huge pages:
// the kernel then faults them in 2 MiB at a time instead of 4 KiB, the bulk of
// the system time of a run on a VM where a fault is dear. Small blocks are
// malloc's.
constexpr size_t huge_page = size_t(2) << 20;
constexpr size_t large_block = size_t(1) << 20;
constexpr int max_large = 16;

struct block {
    void *start;    // the mapping
    size_t length;  // of the mapping
    void *aligned;  // what the caller got
};
block large[max_large];
int large_count = 0;

void *allocate(size_t n) noexcept {
    if (n >= large_block && large_count < max_large) {
        size_t length = (n + 2 * huge_page - 1) / huge_page * huge_page;
        void *start = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (start == MAP_FAILED) {
            return nullptr;
        }
        auto at = (reinterpret_cast<uintptr_t>(start) + huge_page - 1) / huge_page * huge_page;
        void *aligned = reinterpret_cast<void *>(at);
        madvise(aligned, length - (at - reinterpret_cast<uintptr_t>(start)), MADV_HUGEPAGE);
        large[large_count++] = block{start, length, aligned};
        return aligned;
    }
    return std::malloc(n == 0 ? 1 : n);
}

void release(void *p) noexcept {
    for (int i = 0; i < large_count; i++) {
        if (large[i].aligned == p) {
            munmap(large[i].start, large[i].length);
            large[i] = large[--large_count];
            return;
        }
    }
    std::free(p);
}

struct counts {
    uint64_t entries = 0, modules = 0, changed = 0, deletes = 0, creates = 0;
    int64_t shards_before = 0, shards_after = 0;
};

// shard_count of change.before/after.input, 0 when absent or null.
simdjson::error_code shard_count(simdjson::ondemand::value side, int64_t &out) {
    if (side.is_null()) {
        return simdjson::SUCCESS;
    }
    auto input = side.find_field_unordered("input");
    if (input.error() == simdjson::NO_SUCH_FIELD) {
        return simdjson::SUCCESS;
    }
    auto count = input.find_field_unordered("shard_count");
    if (count.error() == simdjson::NO_SUCH_FIELD) {
        return simdjson::SUCCESS;
    }
    int64_t n = 0;
    if (auto err = count.get_int64().get(n)) {
        return err;
    }
    out += n;
    return simdjson::SUCCESS;
}

simdjson::error_code walk(simdjson::ondemand::document &doc, counts &c) {
    simdjson::ondemand::array changes;
    if (auto err = doc["resource_changes"].get_array().get(changes)) {
        return err;
    }
    for (auto entry : changes) {
        simdjson::ondemand::object obj;
        if (auto err = entry.get_object().get(obj)) {
            return err;
        }
        c.entries++;
        std::string_view type, name;
        if (auto err = obj["type"].get_string().get(type)) {
            return err;
        }
        if (auto err = obj["name"].get_string().get(name)) {
            return err;
        }
        bool module = type == "terraform_data" && name == "stream_group";
        simdjson::ondemand::object change;
        if (auto err = obj["change"].get_object().get(change)) {
            return err;
        }
        simdjson::ondemand::array actions;
        if (auto err = change["actions"].get_array().get(actions)) {
            return err;
        }
        bool noop = false;
        for (auto a : actions) {
            std::string_view s;
            if (auto err = a.get_string().get(s)) {
                return err;
            }
            if (s == "no-op") {
                noop = true;
            } else if (s == "delete") {
                c.deletes++;
            } else if (s == "create") {
                c.creates++;
            }
        }
        if (!module) {
            continue;
        }
        c.modules++;
        if (!noop) {
            c.changed++;
        }
        simdjson::ondemand::value before, after;
        if (auto err = change["before"].get(before)) {
            return err;
        }
        if (auto err = shard_count(before, c.shards_before)) {
            return err;
        }
        if (auto err = change["after"].get(after)) {
            return err;
        }
        if (auto err = shard_count(after, c.shards_after)) {
            return err;
        }
    }
    return simdjson::SUCCESS;
}

// map_padded maps the file read-only with at least SIMDJSON_PADDING readable
// bytes after its end, without copying it: an anonymous mapping of the size
// and the padding reserves the range, and the file is mapped over its start
// (MAP_FIXED, prefaulted from the page cache with MAP_POPULATE). The bytes after
// the end of the file in its last page read as zeros, and the pages past it are
// the anonymous mapping's, also zeros, so simdjson may read SIMDJSON_PADDING
// bytes past the end of the document as it requires. Returns false with errno
// set on failure.
bool map_padded(const char *path, simdjson::padded_string_view &out) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return false;
    }
    size_t size = size_t(st.st_size);
    size_t capacity = size + simdjson::SIMDJSON_PADDING;
    void *range = mmap(nullptr, capacity, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (range == MAP_FAILED) {
        close(fd);
        return false;
    }
    if (size > 0 && mmap(range, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED) {
        int err = errno;
        close(fd);
        errno = err;
        return false;
    }
    close(fd);
    out = simdjson::padded_string_view(static_cast<const char *>(range), size, capacity);
    return true;
}

} // namespace

// The global allocation functions, for this program and libsimdjson alike.
void *operator new(size_t n) {
    if (void *p = allocate(n)) {
        return p;
    }
    throw std::bad_alloc();
}
void *operator new[](size_t n) { return operator new(n); }
void *operator new(size_t n, const std::nothrow_t &) noexcept { return allocate(n); }
void *operator new[](size_t n, const std::nothrow_t &) noexcept { return allocate(n); }
void operator delete(void *p) noexcept { release(p); }
void operator delete[](void *p) noexcept { release(p); }
void operator delete(void *p, size_t) noexcept { release(p); }
void operator delete[](void *p, size_t) noexcept { release(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { release(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { release(p); }

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: floor PLAN.json\n");
        return 2;
    }
    simdjson::padded_string_view json;
    if (!map_padded(argv[1], json)) {
        std::fprintf(stderr, "floor: read %s: %s\n", argv[1], std::strerror(errno));
        return 2;
    }
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    if (auto err = parser.iterate(json).get(doc)) {
        std::fprintf(stderr, "floor: parse %s: %s\n", argv[1], simdjson::error_message(err));
        return 2;
    }
    counts c;
    if (auto err = walk(doc, c)) {
        std::fprintf(stderr, "floor: walk %s: %s\n", argv[1], simdjson::error_message(err));
        return 2;
    }
    std::printf("{\"entries\":%llu,\"modules\":%llu,\"changed\":%llu,\"deletes\":%llu,\"creates\":%llu,\"shards_before\":%lld,\"shards_after\":%lld}\n",
                (unsigned long long)c.entries, (unsigned long long)c.modules, (unsigned long long)c.changed,
                (unsigned long long)c.deletes, (unsigned long long)c.creates,
                (long long)c.shards_before, (long long)c.shards_after);
    return 0;
}
