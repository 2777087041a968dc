// Package redact removes secrets from what schedscope records: command
// lines, shell commands, URLs, DSNs, request headers and error text, so
// that a run or sweep directory, a summary or a report can be shared.
//
// A secret is replaced by Marker; what surrounds it (the flag, the user
// name, the header's name, an authorization scheme) is kept, so a reader
// still sees what was given. What counts as a secret:
//
//   - the value of a flag, environment variable, query parameter or
//     key=value pair whose name says it holds one (token, password, passwd,
//     pwd, secret, api-key, access-key, private-key, credential,
//     passphrase, cookie, authorization, auth, sig, signature; not a name
//     ending in -file, -path, -dir, -env, -url, -required, -type, -header or
//     -name, which holds where a secret is, not the secret), in the
//     `--flag=value`, `--flag value` and `NAME=value` forms;
//   - the password of a URL's or DSN's user information
//     (postgres://user:pass@host, http://user:pass@host);
//   - the value of every request header given to -H (Args, HeaderLine,
//     Header) except the headers known to be harmless (Accept,
//     Accept-Encoding, Content-Type, User-Agent and the like: see
//     Harmless), since a header's name rarely says it holds a credential
//     (X-Session-Id, Ocp-Apim-Subscription-Key); a credential header's
//     authorization scheme is kept ("Bearer REDACTED");
//   - in free text, the value of a credential header line (Authorization,
//     Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key, and any header
//     whose name has a dash and is a secret's name by the rule above).
//
// Redaction errs on the side of hiding: a flag that merely looks like a
// secret's loses its value too. Every function is idempotent, safe for
// concurrent use, and leaves text without secrets unchanged.
package redact

import (
	"regexp"
	"strings"
	"unicode"
)

// Marker replaces every secret.
const Marker = "REDACTED"

// Args returns a copy of a command line's words (os.Args, or the words
// after a subcommand) with secrets replaced by Marker: secret flags'
// values in both the `--flag=value` and `--flag value` forms, the values
// of credential headers given with -H or --header, and, in every other
// word, what Text redacts (URLs with passwords, NAME=value pairs, whole
// shell commands given as one word). Words after "--" are taken the same
// way, as they are often another program's command line.
func Args(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue, isFlag := splitFlag(a)
		switch {
		case !isFlag:
			out[i] = Text(a)
		case hasValue && secretName(name):
			out[i] = a[:len(a)-len(value)] + Marker
		case hasValue && headerFlag(name):
			out[i] = a[:len(a)-len(value)] + HeaderLine(value)
		case hasValue:
			out[i] = Text(a)
		case i+1 < len(args) && secretName(name):
			out[i], out[i+1] = a, Marker
			i++
		case i+1 < len(args) && headerFlag(name):
			out[i], out[i+1] = a, HeaderLine(args[i+1])
			i++
		default:
			out[i] = a
		}
	}
	return out
}

// splitFlag splits "-name", "--name" or "--name=value". A word that is not
// a flag ("-", "--", "value") has isFlag false.
func splitFlag(a string) (name, value string, hasValue, isFlag bool) {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return "", "", false, false
	}
	name = strings.TrimLeft(a, "-")
	if name == "" || !isLetter(name[0]) {
		return "", "", false, false // "-5", "---"
	}
	name, value, hasValue = strings.Cut(name, "=")
	return name, value, hasValue, true
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// headerFlag reports whether a flag takes a "Name: value" header line, as
// curl's and schedscope load's -H do.
func headerFlag(name string) bool { return name == "H" || name == "header" }

// Header returns a request header's value as a record may keep it: the
// value of a Harmless header through Text, every other value replaced by
// Marker. A credential header's authorization scheme is kept ("Bearer
// REDACTED"); another header's value is Marker whole, as its first word
// may be the secret.
func Header(name, value string) string {
	if Harmless(name) {
		return Text(value)
	}
	if !secretName(name) {
		return Marker
	}
	if scheme, _, ok := strings.Cut(strings.TrimSpace(value), " "); ok && isScheme(scheme) {
		return scheme + " " + Marker
	}
	return Marker
}

// Harmless reports whether a request header, by its name (any case), is
// one whose value describes the request or the client rather than
// identifying or authorising anyone, so that Header keeps it: content
// negotiation (Accept, Accept-Charset, Accept-Encoding, Accept-Language),
// the body (Content-Type, Content-Encoding, Content-Language,
// Content-Length), caching and conditions (Cache-Control, Pragma,
// If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, Range),
// the connection (Connection, Keep-Alive, TE, Upgrade, Expect, Host,
// Priority), and User-Agent, Referer (its URL through Text), Origin, DNT.
// Every other header's value is redacted.
func Harmless(name string) bool {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "accept", "accept-charset", "accept-encoding", "accept-language",
		"content-type", "content-encoding", "content-language", "content-length",
		"cache-control", "pragma", "if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "range",
		"connection", "keep-alive", "te", "upgrade", "expect", "host", "priority",
		"user-agent", "referer", "origin", "dnt":
		return true
	}
	return false
}

// isScheme reports whether s is an authorization scheme's name (Bearer,
// Basic, Digest, Negotiate, AWS4-HMAC-SHA256...).
func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' {
			return false
		}
	}
	return true
}

// HeaderLine redacts a "Name: value" header line as given to -H: the
// value as Header does. A line without a colon goes through Text.
func HeaderLine(line string) string {
	name, value, ok := strings.Cut(line, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return Text(line)
	}
	lead := value[:len(value)-len(strings.TrimLeft(value, " \t"))]
	return name + ":" + lead + Header(strings.TrimSpace(name), strings.TrimLeft(value, " \t"))
}

// URL redacts one URL or DSN: the password of its user information and
// the values of its secret query parameters. It is Text, named for the
// reader of the call.
func URL(s string) string { return Text(s) }

var (
	// userinfoRE finds "scheme://user:password@" in URLs and URL-form DSNs;
	// the user information runs to the authority's last '@'.
	userinfoRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s'"@]*(?:@[^/?#\s'"@]*)*)@`)
	// headerNameRE finds the "Name:" of a header line, with a header-like
	// name (letters, digits, dashes) and the blanks after the colon.
	headerNameRE = regexp.MustCompile(`(?:^|[\s'"])([A-Za-z][A-Za-z0-9-]*)\s*:[ \t]*`)
	// pairRE finds NAME=value: flags (--token=x), query parameters
	// (?password=x), environment assignments (PGPASSWORD=x), DSN keywords
	// (password=x). The value may be quoted.
	pairRE = regexp.MustCompile(`(^|[\s?&;,('"])(-{0,2}[A-Za-z_][A-Za-z0-9_.\-]*)=("[^"]*"|'[^']*'|[^\s&;'",)]*)`)
	// flagRE finds "--flag value" and "-flag value"; a value does not
	// start with a dash, so "--no-tui --token x" is two flags.
	flagRE = regexp.MustCompile(`(^|\s)(--?[A-Za-z][A-Za-z0-9_.\-]*)([ \t]+)("[^"]*"|'[^']*'|[^\s'"-][^\s'"]*)`)
)

// Text redacts secrets wherever they appear in free text: a shell command
// line, an error message, a URL or a DSN. It finds URL passwords,
// NAME=value pairs and "--flag value" words with a secret's name, and
// credential header lines ("Authorization: Bearer x"), whose value runs
// to the end of the line or the closing quote.
func Text(s string) string {
	if s == "" {
		return s
	}
	s = userinfoRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfoRE.FindStringSubmatch(m)
		user, _, hasPassword := strings.Cut(sub[2], ":")
		if !hasPassword {
			return m
		}
		return sub[1] + user + ":" + Marker + "@"
	})
	s = headerValues(s)
	s = replaceSubmatch(pairRE, s, func(sub []string) string {
		if !secretName(sub[2]) {
			return sub[0]
		}
		return sub[1] + sub[2] + "=" + Marker
	})
	s = replaceSubmatch(flagRE, s, func(sub []string) string {
		if !secretName(sub[2]) {
			return sub[0]
		}
		return sub[1] + sub[2] + sub[3] + Marker
	})
	return s
}

// headerValues redacts the values of the credential header lines in s.
func headerValues(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for _, m := range headerNameRE.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[2]:m[3]]
		if m[0] < done || !credentialHeader(name) {
			continue
		}
		start := m[1]
		end := start + strings.IndexAny(s[start:]+"\n", "\r\n'\"")
		if end == start {
			continue
		}
		b.WriteString(s[done:start])
		b.WriteString(Header(name, s[start:end]))
		done = end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// replaceSubmatch is ReplaceAllStringFunc with the submatches at hand.
func replaceSubmatch(re *regexp.Regexp, s string, repl func(sub []string) string) string {
	return re.ReplaceAllStringFunc(s, func(m string) string { return repl(re.FindStringSubmatch(m)) })
}

// credentialHeader reports whether a "Name: value" found in text is a
// credential header: a secret's name that is a header's (it has a dash,
// as X-Api-Key) or one of the standard ones. A lone "token: ..." in an
// error message is not taken for a header.
func credentialHeader(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "cookie":
		return true
	}
	return strings.Contains(name, "-") && secretName(name)
}

// secretWords are the name parts that make a name a secret's wherever they
// appear in it (so PGPASSWORD and GITHUB_TOKEN count).
var secretWords = []string{"token", "password", "passwd", "secret", "apikey", "credential", "passphrase", "cookie", "authorization", "privatekey", "accesskey"}

// secretParts are the name parts that make a name a secret's when they
// are a whole part of it, between separators.
var secretParts = map[string]bool{"pwd": true, "pass": true, "auth": true, "sig": true, "signature": true}

// notSecretLast are the last parts of names that say where a secret is, or
// what kind it is, not what it is.
var notSecretLast = map[string]bool{"file": true, "path": true, "dir": true, "env": true, "url": true, "uri": true,
	"required": true, "type": true, "header": true, "name": true}

// notSecretFirst are first parts of names that count secrets rather than
// hold one (--max-tokens).
var notSecretFirst = map[string]bool{"max": true, "min": true, "num": true, "n": true}

// secretName reports whether a flag's, variable's, parameter's or
// header's name says its value is a secret. Leading dashes are ignored;
// parts are separated by '-', '_', '.' and lower-to-upper case changes.
func secretName(name string) bool {
	parts := nameParts(strings.TrimLeft(name, "-"))
	if len(parts) == 0 || notSecretLast[parts[len(parts)-1]] || notSecretFirst[parts[0]] && len(parts) > 1 {
		return false
	}
	joined := strings.Join(parts, "")
	for _, w := range secretWords {
		if strings.Contains(joined, w) {
			return true
		}
	}
	if len(parts) == 1 && parts[0] == "key" {
		return true // ?key=... is an API key
	}
	for i, p := range parts {
		if secretParts[p] {
			return true
		}
		if p == "key" && i > 0 && (parts[i-1] == "api" || parts[i-1] == "access" || parts[i-1] == "private") {
			return true
		}
	}
	return false
}

// nameParts splits a name into lower-case parts.
func nameParts(name string) []string {
	var parts []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case r == '-' || r == '_' || r == '.':
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur.WriteRune(unicode.ToLower(r))
		default:
			cur.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	flush()
	return parts
}
