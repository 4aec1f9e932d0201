#!/usr/bin/env bash
# `amarena db check` reports the file as it is and changes nothing: exit 0 and
# "PATH: ok" for an intact database; exit 1, no "ok", for a damaged one (its
# pages or its header overwritten), which stays where it is, byte for byte
# (SQLite may add the -wal and -shm files a reader of a WAL database needs);
# exit 2 for nothing there or something that is not a database.
#   cli_db_check_test.sh path/to/amarena
set -uo pipefail
ulimit -f 262144  # a runaway write fails (256 MB) instead of filling the disk
amarena=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() {  # check FILE WANTED_STATUS DESCRIPTION
  local before after out status
  before=$(ls "$dir" | grep -v -- '-wal$\|-shm$'; [ -f "$1" ] && md5sum < "$1")
  out=$(AMARENA_DB=$1 "$amarena" db check 2>&1)
  status=$?
  after=$(ls "$dir" | grep -v -- '-wal$\|-shm$'; [ -f "$1" ] && md5sum < "$1")
  if [ $status != "$2" ]; then
    echo "FAIL: $3: status $status, wanted $2: $out"; fail=1
  elif [ "$2" != 0 ] && grep -q ": ok" <<<"$out"; then
    echo "FAIL: $3: says ok: $out"; fail=1
  elif [ "$before" != "$after" ]; then
    echo "FAIL: $3: the directory or the file changed: $out"; fail=1
  else
    echo "ok:   $3 -> $status: $out"
  fi
}

db=$dir/a.db
AMARENA_DB=$db "$amarena" precompute "matmul 64x64x64 f32" "matmul 100x37x70 f32" \
  "matmul 7x300x9 f32" > /dev/null || { echo "FAIL: precompute"; exit 1; }
check "$db" 0 "an intact database"
# Closing the last connection copies the WAL into the file, so the pages to
# damage are in it.
AMARENA_DB=$db "$amarena" db stats > /dev/null || { echo "FAIL: stats"; exit 1; }
pages=$(($(stat -c %s "$db") / 4096))
[ "$pages" -ge 4 ] || { echo "FAIL: only $pages pages"; exit 1; }

cp "$db" "$dir/pages.db"  # garbage over every page after the second
dd if=/dev/urandom of="$dir/pages.db" bs=4096 seek=2 count=$((pages - 2)) \
  conv=notrunc 2> /dev/null
check "$dir/pages.db" 1 "damaged pages"

cp "$db" "$dir/header.db"  # the header after the magic string
dd if=/dev/urandom of="$dir/header.db" bs=1 seek=16 count=84 conv=notrunc \
  2> /dev/null
check "$dir/header.db" 1 "a damaged header"

check "$dir/none.db" 2 "no file"
mkdir "$dir/subdir"
check "$dir/subdir" 2 "a directory"
echo "my notes" > "$dir/notes.txt"
check "$dir/notes.txt" 2 "a text file"
exit $fail
