package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"unicode"
)

// tokenEnv is the environment variable every command reads the agent's
// bearer token from when no token file is given: `run` and `sweep` send
// it, `fixture` requires it. A token is never taken from the command line,
// where ps, /proc/PID/cmdline, shell history and /debug/pprof/cmdline show
// it.
const tokenEnv = "SCHEDSCOPE_AGENT_TOKEN"

// tokenFile is a --...-token-file flag: the file a command reads a bearer
// token from, else $SCHEDSCOPE_AGENT_TOKEN.
type tokenFile struct {
	flag string // the flag's name, for errors
	path string
}

// addTokenFile defines the flag name on fs; what says what the token is
// for.
func addTokenFile(fs *flag.FlagSet, name, what string) *tokenFile {
	t := &tokenFile{flag: name}
	fs.StringVar(&t.path, name, "", fmt.Sprintf("file holding the bearer token %s (default: $%s); never given on the command line, where ps shows it", what, tokenEnv))
	return t
}

// read returns the token: the file's content, trimmed, when the flag is
// set, else $SCHEDSCOPE_AGENT_TOKEN, else "". from says where it came from,
// for a message. A bad file is a usage error that never quotes the file's
// content.
func (t *tokenFile) read() (token, from string, err error) {
	if t.path != "" {
		b, err := os.ReadFile(t.path)
		if err != nil {
			return "", "", usageErr("--%s: %v", t.flag, err)
		}
		token = strings.TrimSpace(string(b))
		if err := checkToken(token); err != nil {
			return "", "", usageErr("--%s %s: %v", t.flag, t.path, err)
		}
		return token, t.path, nil
	}
	token = strings.TrimSpace(os.Getenv(tokenEnv))
	if token == "" {
		return "", "", nil
	}
	if err := checkToken(token); err != nil {
		return "", "", usageErr("$%s: %v", tokenEnv, err)
	}
	return token, "$" + tokenEnv, nil
}

// checkToken accepts a token that fits in "Authorization: Bearer TOKEN".
func checkToken(token string) error {
	if token == "" {
		return errors.New("empty; want the token alone")
	}
	if strings.IndexFunc(token, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return errors.New("holds white space or control characters; want the token alone, on one line")
	}
	return nil
}

// refuseSecretFlag returns a usage error (exit 2) when args give the
// removed flag name, which took a secret on the command line; instead
// names the way that replaced it. The error never quotes the value given.
func refuseSecretFlag(args []string, name, instead string) error {
	for _, a := range args {
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name {
			// "--NAME:" and not "--NAME word", which the error's redaction would hide.
			return usageErr("--%s: removed, as a secret on the command line is visible to every user of the host (ps, /proc), to shell history and to /debug/pprof/cmdline; use %s", name, instead)
		}
	}
	return nil
}
