#!/usr/bin/env bash
# The database file through what SQLite promises to survive, with nothing set
# aside and nothing committed lost:
#  1. a writer storing 700 Specs beside another process that loops opening
#     the database, reading its statistics and running checkpoints, ROUNDS
#     times: no PATH.bad-* appears, the inode stays, all 700 are found;
#  2. a checkpoint killed with SIGKILL midway (page 1 written, the file not
#     yet grown to match): stopped at a size limit, then SIGKILLed; and
#     SIGKILLed from another thread while it copies. The next process finds
#     all 700;
#  3. a full disk, simulated two ways: writes past a size limit fail with
#     EFBIG (RLIMIT_FSIZE, SIGXFSZ ignored: db_stress fsize=), during a
#     checkpoint and during a writer's commits; and, when this process may
#     mount one, a real 3 MB tmpfs that fills up (ENOSPC). The next process
#     finds every Spec whose store succeeded, and can store again once there
#     is room.
#   db_checkpoint_test.sh path/to/db_stress [ROUNDS]
set -uo pipefail
ulimit -f 262144  # a runaway write fails (256 MB) instead of filling the disk
stress=$1
rounds=${2:-20}
dir=$(mktemp -d)
mnt=$dir/tmpfs
cleanup() {
  mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; ls -la "$dir" "${2:-$dir}" 2>/dev/null; exit 1; }
no_set_aside() {  # no_set_aside DB WHEN
  if ls "$1".bad-* > /dev/null 2>&1; then fail "$2: the file was set aside"; fi
}

# 1. Writer beside readers and checkpoints.
for round in $(seq "$rounds"); do
  db=$dir/r$round.db
  "$stress" "$db" --store 0 1 > /dev/null || fail "round $round: setup"
  inode=$(stat -c %i "$db")
  rm -f "$dir/stop"
  "$stress" "$db" --readers "$dir/stop" > "$dir/readers.log" 2>&1 &
  readers=$!
  out=$("$stress" "$db" --store 0 700 2>&1) || fail "round $round: writer: $out"
  touch "$dir/stop"
  wait $readers || fail "round $round: readers: $(cat "$dir/readers.log")"
  no_set_aside "$db" "round $round"
  [ "$(stat -c %i "$db")" = "$inode" ] || fail "round $round: inode changed"
  got=$("$stress" "$db" --expect 0 700 2>&1) || fail "round $round: $got"
  [ "$round" = 1 ] && echo "round 1: $out; readers: $(cat "$dir/readers.log")"
  rm -f "$db" "$db"-wal "$db"-shm
done
echo "writer beside readers and checkpoints, $rounds rounds: ok"

# 2. A checkpoint killed midway. A read snapshot held while storing keeps
# all 700 Specs in the WAL, so the checkpoint has megabytes to copy.
short() {  # whether the file holds fewer pages than its header says
  local h
  h=$("$stress" "$1" --header) || return 1
  [ "$(sed 's/header: \([0-9]*\) pages, file: \([0-9]*\) pages/\1 \2/' <<<"$h" |
    awk '{print ($1 > $2)}')" = 1 ]
}
# 2a. Deterministically: the checkpointing process may not grow the file
# past 300 kB, so its checkpoint stops there with page 1 written; then it
# SIGKILLs itself without closing anything.
db=$dir/stopped.db
"$stress" "$db" --store 0 700 keep-wal > /dev/null || fail "keep-wal store"
inode=$(stat -c %i "$db")
{ "$stress" "$db" --checkpoint fsize=300000 die; } > /dev/null 2>&1  # no "Killed"
[ $? = 137 ] || fail "the checkpointer was not killed"
short "$db" || fail "the file is not shorter than its header: $("$stress" "$db" --header)"
header=$("$stress" "$db" --header)
got=$("$stress" "$db" --expect 0 700 2>&1) || fail "after the stopped checkpoint: $got"
no_set_aside "$db" "after the stopped checkpoint"
[ "$(stat -c %i "$db")" = "$inode" ] || fail "after the kill: inode changed"
echo "checkpoint stopped at 300 kB and SIGKILLed ($header): $got"
# 2b. Asynchronously: SIGKILL from another thread as soon as the file grows,
# while the checkpoint copies; tried until it lands before the copy ends.
killed=
for try in 1 2 3 4 5 6; do
  db=$dir/killed$try.db
  "$stress" "$db" --store 0 700 keep-wal > /dev/null || fail "keep-wal store"
  inode=$(stat -c %i "$db")
  { "$stress" "$db" --checkpoint kill-midway; } > /dev/null 2>&1
  rc=$?
  [ $rc = 3 ] && continue  # the checkpoint finished first
  [ $rc = 137 ] || fail "the checkpointer ended with status $rc"
  header=$("$stress" "$db" --header)
  was_short=no
  short "$db" && was_short=yes  # before the next process finishes the copy
  got=$("$stress" "$db" --expect 0 700 2>&1) || fail "after the kill: $got"
  no_set_aside "$db" "after the kill"
  [ "$(stat -c %i "$db")" = "$inode" ] || fail "after the kill: inode changed"
  killed="$header: $got"
  [ $was_short = yes ] && break  # else the kill came after the copy: again
done
[ -n "$killed" ] || fail "the checkpoint was never killed before it finished"
echo "checkpoint SIGKILLed while copying ($killed)"

# 3a. A checkpoint that runs out of room: the file may not grow past 500 kB.
db=$dir/full.db
"$stress" "$db" --store 0 700 keep-wal > /dev/null || fail "keep-wal store"
out=$("$stress" "$db" --checkpoint fsize=500000)
[ "$out" != "checkpoint: ok" ] || fail "the checkpoint did not run out of room"
header=$("$stress" "$db" --header)
got=$("$stress" "$db" --expect 0 700 2>&1) || fail "after a full disk: $got"
no_set_aside "$db" "after a failed checkpoint"
echo "checkpoint out of room ($out; $header): $got"

# 3b. A writer that runs out of room: its later stores fail (and say so
# once), the kernel is unaffected, what it committed stays.
db=$dir/writer.db
out=$("$stress" "$db" --store 0 700 fsize=1500000 ok-list="$dir/ok" \
  2> "$dir/err")
grep -q "failed [1-9]" <<<"$out" || fail "the writer never ran out: $out"
[ "$(grep -c "warning: cannot commit results to search database $db" \
  "$dir/err")" = 1 ] || fail "not one warning: $(cat "$dir/err")"
got=$("$stress" "$db" --expect list="$dir/ok" 2>&1) || fail "writer: $got"
no_set_aside "$db" "after a full writer"
more=$("$stress" "$db" --store 700 10 2>&1)
grep -q "stored 10," <<<"$more" || fail "no store after the room came back: $more"
echo "writer out of room (${out%%;*}): $got, then $more"

# 3c. A real full file system, if this process may mount one.
mkdir -p "$mnt"
if mount -t tmpfs -o size=3m tmpfs "$mnt" 2>/dev/null; then
  db=$mnt/a.db
  head -c 1000000 /dev/zero > "$mnt/ballast"
  out=$("$stress" "$db" --store 0 700 ok-list="$dir/ok-tmpfs" 2> /dev/null)
  grep -q "failed [1-9]" <<<"$out" || fail "the tmpfs never filled: $out"
  # A checkpoint into the full file system fails midway too.
  cp_out=$("$stress" "$db" --checkpoint)
  got=$("$stress" "$db" --expect list="$dir/ok-tmpfs" 2>&1) ||
    fail "full tmpfs: $got"
  no_set_aside "$db" "on a full tmpfs"
  rm "$mnt/ballast"
  more=$("$stress" "$db" --store 700 10 2>&1)
  grep -q "stored 10," <<<"$more" || fail "no store after freeing room: $more"
  got_all=$("$stress" "$db" --expect list="$dir/ok-tmpfs" 2>&1) ||
    fail "after freeing room: $got_all"
  echo "full tmpfs (${out%%;*}; $cp_out): $got, then $more"
  umount "$mnt"
else
  echo "full tmpfs: skipped (this process may not mount a tmpfs)"
fi
