package termsafe

import "strings"

// chatEscapes neutralises the markup chat services read in a message's
// text: Slack's control sequences (<!channel>, <@U…>, <url|label>) by
// its own entity escapes, and Markdown (Discord, Mattermost, Teams:
// emphasis, code, quotes, masked links [label](url), @everyone and @here
// mentions) by backslashes.
var chatEscapes = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`,
	"[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`, "#", `\#`, "@", `\@`,
)

// Chat returns s, one line of agent-written text, safe inside a chat
// message: Line's escapes, then every character chat markup reads
// escaped, so that a person's channel shows the text and is neither
// pinged, linked nor formatted by it.
func Chat(s string) string { return chatEscapes.Replace(Line(s)) }
