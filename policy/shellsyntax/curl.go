package shellsyntax

// CurlValueOpts are curl options that take a value (the next word): the
// template check (policy/template) and the deny rules' address checks read
// them to tell an option's value from a URL operand.
var CurlValueOpts = WordSet(`
	-A -b -c -C -d -D -e -E -F -H -K -m -o -P -Q -r -t -T -u -U -w -x -X -y -Y -z
	--data --data-ascii --data-binary --data-raw --data-urlencode --json --url --form --form-string
	--header --user-agent --referer --output --upload-file --config --cookie --cookie-jar --write-out
	--proxy --request --user --max-time --connect-timeout --retry --retry-delay --cacert --capath
	--cert --key --resolve --connect-to --unix-socket --abstract-unix-socket --netrc-file --variable
	--output-dir --trace --trace-ascii --dump-header --limit-rate --range --interface --dns-servers
	--proxy-user --oauth2-bearer --aws-sigv4 --url-query --expand-data --expand-url --noproxy
	--max-filesize --speed-limit --speed-time --time-cond --proto --proto-redir --proto-default
	--stderr --proxy-cert --proxy-key`)
