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
// 2 with a one-line reason on a file it cannot read or parse.
#include <cstdint>
#include <cstdio>
#include <string_view>

#include <simdjson.h>

namespace {

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

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: floor PLAN.json\n");
        return 2;
    }
    simdjson::padded_string json;
    if (auto err = simdjson::padded_string::load(argv[1]).get(json)) {
        std::fprintf(stderr, "floor: read %s: %s\n", argv[1], simdjson::error_message(err));
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
