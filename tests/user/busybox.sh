#!/bin/sh
# busybox's shell and applets as a person's script uses them, run by busybox's sh on
# Grace and by the same busybox binary on Linux: words and quoting, arithmetic,
# test and case, exit statuses (a SIGPIPE'd writer's among them), command
# substitution, here-documents (one bigger than a pipe's atomic write), pipelines
# that move more than a pipe holds, redirections onto descriptors of its own,
# subshells, and the applets over files in a scratch directory of its own under
# /tmp (made first: Grace's root has none). Everything printed is what Linux fixes
# for any file system and any run: contents, names, sizes of files, modes, link
# counts, statuses; never a pid, a time, an inode number, a directory's size or
# the scratch directory's random name. Listings go through a pipe, so that ls
# prints one name a line on both sides (it makes columns for a terminal).
#
# userdiff: busybox_sh_runs_the_script_as_on_linux
# run: /bin/sh /tests/busybox.sh

# The runner compares standard output only: error messages belong to the result.
exec 2>&1

mkdir -p /tmp
scratch=$(mktemp -d /tmp/busybox.XXXXXX) || exit 1
cd "$scratch" || exit 1

echo "== words and quoting"
set -- one "two three" four
echo "$# arguments, the second is '$2'"
for w in "$@"; do printf '<%s>' "$w"; done
echo
path=/usr/local/lib/libfoo.so.1
echo "${#path} ${path##*/} ${path%/*} ${path#/usr/} ${path%%.*}"
unset nothing
echo "${nothing:-default} ${nothing-unset} [${nothing}]"
IFS=: read -r a b c <<EOF
x:y:z:w
EOF
echo "a=$a b=$b c=$c"
echo 'single $quotes' "double \$quotes" back\ slash

echo "== arithmetic"
i=0
total=0
while [ $i -lt 10 ]; do
	i=$((i + 1))
	total=$((total + i * i))
done
echo "sum of squares 1..10: $total"
echo $(((7 + 5) * 3 % 5)) $((1 << 10)) $((-17 / 5)) $((-17 % 5)) $((0x1f + 010))
expr 6 \* 7
expr length "hello world"
expr substr "abcdefgh" 3 4
expr 10 \> 3
expr 3 \> 10
echo "expr's status for 0: $?"

echo "== test and case"
[ 3 -lt 5 ] && echo "3 < 5"
[ "abc" = "abc" ] && [ "abc" != "abd" ] && echo "strings compare"
test -z "" && test -n "x" && echo "empty and not"
[ 10 -ge 10 -a 2 -ne 3 ] && echo "and"
[ ! -e no-such-file ] && echo "no-such-file does not exist"
classify() {
	case $1 in
	[0-9]*) echo "$1: a number" ;;
	*.txt | *.md) echo "$1: text" ;;
	-*) echo "$1: an option" ;;
	"") echo "(empty): nothing" ;;
	*) echo "$1: something else" ;;
	esac
}
for w in 42 notes.txt README.md -v '' other; do
	classify "$w"
done

echo "== exit statuses"
true
echo "true: $?"
false
echo "false: $?"
(exit 3)
echo "subshell exit 3: $?"
sh -c 'exit 7'
echo "sh -c exit 7: $?"
! true
echo "! true: $?"
sh -c 'no-such-command'
echo "not found: $?"
sh -c 'exec /dev/null'
echo "not executable: $?"
f() { return 9; }
f
echo "function return 9: $?"
false || echo "|| runs after a failure"
true && echo "&& runs after a success"
set -o pipefail
yes | head -n 2
echo "yes | head with pipefail: $? (SIGPIPE)"
false | true
echo "false | true with pipefail: $?"
set +o pipefail
false | true
echo "false | true: $?"

echo "== command substitution"
n=$(echo hello | wc -c)
echo "hello is $n bytes with its newline"
echo "nested: $(basename "$(dirname /a/b/c)")"
echo "backquotes: `echo old style`"
lines=$(printf 'one\ntwo\nthree\n')
echo "$lines" | tail -n 1
echo "trailing newlines go: [$(printf 'x\n\n\n')]"

echo "== here-documents"
name=grace
cat <<EOF
expanded: $name $((2 + 3)) $(echo sub)
EOF
cat <<'EOF'
quoted: $name $((2 + 3))
EOF
cat <<-EOF
	tabs stripped
EOF
while read -r word count; do
	echo "$word has $count"
done <<EOF
apples 3
pears 5
EOF
# Bigger than a pipe's atomic write: the shell feeds it while cat reads.
cat <<EOF | wc -l
$(seq 1 3000)
EOF

echo "== pipelines"
seq 1 20000 | sort -rn | head -n 3
seq 1 100000 | tail -n 1
seq 1 50000 | md5sum
echo "the quick brown fox jumps over the lazy dog" | tr ' ' '\n' | sort | uniq -c | sort -rn | head -n 2
yes hello | head -n 3
printf 'b\na\nc\na\nb\na\n' | sort | uniq -c
printf 'b\na\nc\na\nb\na\n' | sort -u | tr '\n' ' '
echo

echo "== redirections"
echo first >out
echo second >>out
cat out
wc -l <out
{
	echo grouped one
	echo grouped two
} >group
cat group
ls no-such-file 2>err
echo "ls status: $?"
cat err
exec 3>fd3
echo "through descriptor 3" >&3
exec 3>&-
cat fd3
exec 4<out
read -r line <&4
echo "read from descriptor 4: $line"
exec 4<&-
cat </dev/null
echo "/dev/null reads empty: $?"
head -c 8 /dev/zero | od -An -tx1
echo discarded >/dev/null
echo "stderr" 1>&2 2>/dev/null
sh -c 'echo to stderr >&2' 2>&1 | tr a-z A-Z

echo "== subshells"
x=outer
(x=inner; echo "inside: $x")
echo "outside: $x"
(cd /; echo "subshell in /: $(pwd)")
[ "$(pwd)" = "$scratch" ] && echo "the script's directory is unchanged"
export EXPORTED=yes
NOT_EXPORTED=no
sh -c 'echo "child sees EXPORTED=$EXPORTED NOT_EXPORTED=$NOT_EXPORTED"'
ONLY_FOR_ENV=once env | grep '^ONLY_FOR_ENV='
echo "after: ${ONLY_FOR_ENV:-unset}"

echo "== files"
mkdir -p a/b/c
echo "deep file" >a/b/c/f.txt
printf 'line 1\nline 2\nline 3\n' >a/lines
ls a | cat
ls -a a/b | cat
ls -F a | cat
cp a/lines a/copy
cmp a/lines a/copy && echo "the copy is the same"
cp -r a/b b-copy
find b-copy | sort
mv a/copy a/moved
ls a | cat
ln -s lines a/link
readlink a/link
cat a/link
[ -L a/link ] && [ -f a/link ] && echo "a/link is a symlink to a file"
ln -s no-target a/dangling
[ -L a/dangling ] && [ ! -e a/dangling ] && echo "a/dangling dangles"
ln a/lines a/hard
stat -c '%n %s %a %F %h' a/lines a/hard a/link a/b/c/f.txt
stat -c '%n %a %F' a a/b
touch a/empty
stat -c '%n %s %F' a/empty
echo "$(basename a/b/c/f.txt) $(basename a/b/c/f.txt .txt) $(dirname a/b/c/f.txt) $(dirname f)"
find . -type f | sort
find . -name '*.txt' | sort
rm a/hard
stat -c '%n %h' a/lines
rm -r b-copy
rm a/dangling a/link
rmdir a/b/c 2>&1 || echo "rmdir of a directory with a file fails"
ls -R a | cat
wc -c a/lines a/moved
md5sum a/lines
sha256sum a/b/c/f.txt

echo "== text"
printf 'root:x:0:0\ndaemon:x:1:1\nbin:x:2:2\n' >passwd
cut -d: -f1,3 passwd
cut -c2-4 passwd
sed 's/:x:/ -> /' passwd
sed -n '2,3p' passwd
sed '/daemon/d' passwd
sed -e 's/o/0/g' -e 's/^/> /' passwd
grep -c x passwd
grep -n bin passwd
grep -v root passwd
grep -E '^(root|bin):' passwd
grep -i ROOT passwd
grep -q nothing passwd
echo "grep -q of nothing: $?"
awk -F: '{ print $3 ": " $1 }' passwd
awk -F: '{ s += $3 } END { printf "sum %d over %d lines\n", s, NR }' passwd
awk 'BEGIN { for (i = 1; i <= 5; i++) printf "%d%s", i * i, (i < 5 ? "," : "\n") }'
head -n 2 passwd
tail -n 1 passwd
tail -n +2 passwd
sort -t: -k3 -rn passwd
tac passwd
rev passwd
nl passwd
paste -d' ' passwd passwd | head -n 1
tr a-z A-Z <passwd
tr -d ':' <passwd
echo "aaabbbccc" | tr -s 'ab'
fold -w 5 passwd | head -n 3
wc passwd
wc -l -w -c <passwd
seq 5
seq -s, 2 2 10
seq 3 -1 1
printf '%5s|%-5s|%05d|%x|%o|%c|%.3f\n' ab cd 42 255 8 xyz 3.14159
printf '%s\n' one two three
base64 passwd | base64 -d | head -n 1
gzip -c passwd | gunzip -c | tail -n 1
od -c a/b/c/f.txt
echo hello | xxd
echo "a b c" | xargs -n 1 echo item
seq 1 6 | xargs -n 2 echo
printf 'x\ny\n' >one
printf 'x\nz\n' >two
diff one two
echo "diff status: $?"
tee copy1 copy2 <one >/dev/null
cat copy1 copy2

echo "== environment"
env | grep -E '^(HOME|TERM|PATH)=' | sort
echo "HOME=$HOME TERM=$TERM"
uname -m
echo "sleeping"
sleep 0.1
usleep 1000
echo "awake"

cd /
rm -r "$scratch"
[ -d "$scratch" ] || echo "the scratch directory is gone"
exit 4
