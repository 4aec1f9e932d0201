#!/usr/bin/env bash
# The database file through what SQLite promises to survive, with nothing set
# aside and nothing committed lost:
#  1. a writer storing 700 Specs beside another process that loops opening
#     the database, reading its statistics and running checkpoints, ROUNDS
#     times: no PATH.bad-* appears, the inode stays, all 700 are found;
#  2. a checkpoint killed with SIGKILL midway (page 1 written, the file not
#     yet grown to match): the next process finds all 700;
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
killed=0
for try in 1 2 3 4 5; do
  db=$dir/killed$try.db
  "$stress" "$db" --store 0 700 keep-wal > /dev/null || fail "keep-wal store"
  inode=$(stat -c %i "$db")
  { "$stress" "$db" --checkpoint kill-midway; } > /dev/null 2>&1  # no "Killed"
  rc=$?
  [ $rc = 3 ] && continue  # the checkpoint finished first: try again
  [ $rc = 137 ] || fail "the checkpointer ended with status $rc"
  header=$("$stress" "$db" --header)
  got=$("$stress" "$db" --expect 0 700 2>&1) || fail "after the kill: $got"
  no_set_aside "$db" "after the kill"
  [ "$(stat -c %i "$db")" = "$inode" ] || fail "after the kill: inode changed"
  echo "checkpoint killed midway ($header): $got"
  killed=1
  break
done
[ $killed = 1 ] || fail "the checkpoint was never caught midway in 5 tries"

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
