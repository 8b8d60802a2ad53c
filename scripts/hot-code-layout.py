#!/usr/bin/env python3
"""Writes the linker script that places the plugin's hot code together.

Usage: hot-code-layout.py BINARY LINK_MAP OUTPUT RAN_FUNCTIONS...

BINARY and LINK_MAP are one link of the plugin (GNU ld's -Map); each RAN_FUNCTIONS file lists the
names of the functions that ran in one part of the profile, one per line (callgrind's, mangled). Names do not find sections by
themselves: a constructor runs as C1 but lives in the section of C2, identical functions are
folded into one section under another name (-fipa-icf), a function's cold part and the startup
code (_start) live in differently named sections. So each name is looked up by address in the
binary and mapped to the input section that holds that address in the link map; the script
lists those sections for an output section placed before .text: the first part's in address
order, then those only the next part ran, and so on.
"""
import bisect
import os
import re
import subprocess
import sys


def input_sections(link_map):
    """(address, size, section name, file) of every input section placed in the link."""
    sections = []
    placed = False
    pending = None  # a long section name whose address is on the next line
    with open(link_map) as f:
        for line in f:
            if line.startswith("Linker script and memory map"):
                placed = True
                continue
            if not placed:
                continue
            one_line = re.match(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
            if one_line:
                name, addr, size, obj = one_line.groups()
                sections.append((int(addr, 16), int(size, 16), name, obj.strip()))
                pending = None
                continue
            name_only = re.match(r"^ (\.\S+)\s*$", line)
            if name_only:
                pending = name_only.group(1)
                continue
            rest = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
            if rest and pending:
                addr, size, obj = rest.groups()
                sections.append((int(addr, 16), int(size, 16), pending, obj.strip()))
            pending = None
    return sorted(s for s in sections if s[1] > 0)


def function_addresses(binary):
    """Name -> addresses of the function symbols (local ones too) of the binary. A local name
    can be defined in several files (a clone like `f.isra.0`, an anonymous namespace's
    function); callgrind names them alike, so each counts as run."""
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                         check=True).stdout
    addresses = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            addresses.setdefault(parts[2], []).append(int(parts[0], 16))
    return addresses


def pattern(name, obj):
    # Function sections are found by name wherever they come from; a plain .text (the C
    # runtime's _start, say) only in its own file.
    if name.startswith(".text."):
        return f"*({name})"
    member = re.search(r"\(([^()]+)\)$", obj)  # an archive member: lib.a(member.o)
    return f"*{os.path.basename(member.group(1) if member else obj)}({name})"


def sections_that_ran(names, sections, starts, addresses):
    """Address -> (size, pattern) of the code sections holding the functions `names`."""
    chosen = {}
    for address in (a for name in names for a in addresses.get(name, [])):  # none: a library's
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and sections[i][0] <= address < sections[i][0] + sections[i][1]:
            addr, size, section, obj = sections[i]
            if section.startswith(".text"):
                chosen[addr] = (size, pattern(section, obj))
    return chosen


def main():
    binary, link_map, output = sys.argv[1:4]
    sections = input_sections(link_map)
    starts = [s[0] for s in sections]
    addresses = function_addresses(binary)
    # The C runtime's start-up and exit code runs in every process; callgrind does not name it.
    runtime = {"_start", "frame_dummy", "register_tm_clones", "deregister_tm_clones",
               "__do_global_dtors_aux"}
    patterns, sizes, placed = [], [], set()
    for part, ran_file in enumerate(sys.argv[4:]):
        with open(ran_file) as f:
            ran = {line.strip() for line in f if line.strip()}
        chosen = sections_that_ran(ran | (runtime if part == 0 else set()), sections, starts,
                                   addresses)
        part_patterns, part_bytes = [], 0
        for addr in sorted(chosen):
            size, p = chosen[addr]
            if addr not in placed:
                placed.add(addr)
                part_bytes += size
                if p not in part_patterns and p not in patterns:
                    part_patterns.append(p)
        patterns += part_patterns
        sizes.append((len(part_patterns), part_bytes))
    summary = ", then ".join(f"{n} sections, {b // 1024} KiB" for n, b in sizes)
    with open(output, "w") as f:
        f.write("/* Generated by scripts/profile-link-order.sh: the plugin's code that ran in its\n"
                f"   profiled life ({summary}),\n   placed together before the rest. */\n")
        f.write("SECTIONS {\n  .text.hot_code : {\n")
        for p in patterns:
            f.write(f"    {p}\n")
        f.write("  }\n}\nINSERT BEFORE .text;\n")
    print(summary, file=sys.stderr)


if __name__ == "__main__":
    main()
