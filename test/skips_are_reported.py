"""Skipped tests are reported as skipped, never as passed.

A Catch2 test case that cannot run here prints "SKIP: reason" and returns, so its process exits
0 like a pass; ctest counts it as skipped only through the SKIP_REGULAR_EXPRESSION property
that ortc_catch_tests (test/CMakeLists.txt) sets. Checks, from ctest's own listing of this build:
every entry that runs a Catch2 binary has that property, and the hidden skip probe's output
(test/support/skip_probe_test.cpp) matches it while the probe exits 0. Script tests skip with
exit code 77: every entry whose command is a script that can exit 77 has SKIP_RETURN_CODE 77.
And every Catch2 entry selects at least one test case of its binary: a test name that CMake's
list syntax cut in two (a ';' in it) makes entries that run nothing and pass.
Usage: skips_are_reported.py BUILD_DIR UNIT_TEST_BINARY
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def ctest_listing(build):
    """ctest's JSON listing of the build's tests. ctest rewrites Testing/Temporary/LastTest.log
    of the folder it lists, which would clobber the log of the ctest run this test is part of:
    it lists a copy of the CTestTestfile.cmake tree instead (their includes are absolute)."""
    with tempfile.TemporaryDirectory() as tmp:
        for folder, dirs, files in os.walk(build):
            dirs[:] = [d for d in dirs if d not in ("Testing", "CMakeFiles", "_deps")]
            if "CTestTestfile.cmake" in files:
                target = os.path.join(tmp, os.path.relpath(folder, build))
                os.makedirs(target, exist_ok=True)
                shutil.copy(os.path.join(folder, "CTestTestfile.cmake"), target)
        out = subprocess.run(["ctest", "--test-dir", tmp, "--show-only=json-v1"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def main(build, unit_binary):
    listing = ctest_listing(build)
    is_catch = {}

    def catch_binary(path):
        if path not in is_catch:
            try:
                with open(path, "rb") as f:
                    is_catch[path] = b" is a Catch v" in f.read()
            except OSError:
                is_catch[path] = False
        return is_catch[path]

    def can_exit_77(path):
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            return False
        return re.search(r"\b(exit|return|sys\.exit\(|SystemExit\()\s*\(?77\b", text) is not None

    # The probe skips as every Catch2 case here does; its output is what the regex must match.
    probe = subprocess.run([unit_binary, "[.skip_probe]"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    problems = []
    if probe.returncode != 0 or "SKIP:" not in probe.stdout:
        problems.append(f"the skip probe did not skip as expected ({probe.returncode}): "
                        f"{probe.stdout}")
    catch_entries, script_entries = 0, 0
    for test in listing["tests"]:
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        command = test.get("command") or []
        if not command:
            continue
        if catch_binary(command[0]):
            catch_entries += 1
            # Catch2 v2 exits with the number of test cases the spec lists.
            listed = subprocess.run(command + ["--list-test-names-only"], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
            if listed.returncode == 0 or not listed.stdout.strip():
                problems.append(f"{test['name']}: selects no test case of {command[0]}, so it "
                                "runs nothing (a ';' in a test name splits its ctest entry)")
            regexes = props.get("SKIP_REGULAR_EXPRESSION") or []
            if not any(re.search(r, probe.stdout) for r in regexes):
                problems.append(f"{test['name']}: a skip would count as a pass (skip regex "
                                f"{regexes} does not match the probe's output)")
            continue
        scripts = [a for a in command if (a.endswith((".py", ".sh")) or "/scripts/" in a)
                   and not a.endswith("skips_are_reported.py")]
        if any(can_exit_77(s) for s in scripts):
            script_entries += 1
            if str(props.get("SKIP_RETURN_CODE")) != "77":
                problems.append(f"{test['name']}: its script can exit 77 but 77 is not its "
                                "SKIP_RETURN_CODE")
    if catch_entries == 0:
        problems.append("no Catch2 entries found in ctest's listing")
    for p in problems:
        print("FAIL:", p)
    print(f"{catch_entries} Catch2 entries and {script_entries} script entries that can skip "
          "are reported as skipped when they skip")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
