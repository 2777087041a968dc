package redact

import (
	"slices"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"nil", nil, nil},
		{"no secrets", []string{"--rate", "50", "--no-tui", "http://127.0.0.1:8080/sleep?ms=5"},
			[]string{"--rate", "50", "--no-tui", "http://127.0.0.1:8080/sleep?ms=5"}},
		{"token flag, two words", []string{"--token", "s3cret", "--rate", "5"}, []string{"--token", Marker, "--rate", "5"}},
		{"token flag, one dash", []string{"-token", "s3cret"}, []string{"-token", Marker}},
		{"token flag, equals", []string{"--agent-token=s3cret", "URL"}, []string{"--agent-token=" + Marker, "URL"}},
		{"token file is a path", []string{"--token-file", "/run/secrets/tok", "--agent-token-file=/tmp/t"},
			[]string{"--token-file", "/run/secrets/tok", "--agent-token-file=/tmp/t"}},
		{"password and api key flags", []string{"--password", "hunter2", "--api-key=k1", "--db-password", "p"},
			[]string{"--password", Marker, "--api-key=" + Marker, "--db-password", Marker}},
		{"authorization header", []string{"-H", "Authorization: Bearer hdrsecret", "-H", "Accept: text/plain"},
			[]string{"-H", "Authorization: Bearer " + Marker, "-H", "Accept: text/plain"}},
		{"header flag, equals", []string{"--H=X-Api-Key: apisecret", "--header=Cookie: a=b; c=d"},
			[]string{"--H=X-Api-Key: " + Marker, "--header=Cookie: " + Marker}},
		{"proxy authorization, basic", []string{"-H", "Proxy-Authorization:Basic dXNlcjpwYXNz"},
			[]string{"-H", "Proxy-Authorization:Basic " + Marker}},
		{"URL password and query", []string{"http://u:urlpass@127.0.0.1:8080/sleep?ms=5&password=qpass"},
			[]string{"http://u:" + Marker + "@127.0.0.1:8080/sleep?ms=5&password=" + Marker}},
		{"DSN flag", []string{"--db-dsn", "postgres://app:dbpass@db:5432/app?sslmode=disable"},
			[]string{"--db-dsn", "postgres://app:" + Marker + "@db:5432/app?sslmode=disable"}},
		{"DSN keywords", []string{"--db-dsn=host=db user=app password=dbpass dbname=app"},
			[]string{"--db-dsn=host=db user=app password=" + Marker + " dbname=app"}},
		{"a shell command as one word", []string{"--cmd", "PGPASSWORD=envpass ./server --token s3cret -addr :8080"},
			[]string{"--cmd", "PGPASSWORD=" + Marker + " ./server --token " + Marker + " -addr :8080"}},
		{"after --", []string{"--", "--token", "s3cret"}, []string{"--", "--token", Marker}},
		{"secret flag last", []string{"--rate", "5", "--token"}, []string{"--rate", "5", "--token"}},
		{"max tokens is a count", []string{"--max-tokens", "100"}, []string{"--max-tokens", "100"}},
		{"headers not known to be harmless", []string{"-H", "X-Session-Id: sess-123", "-H", "Authentication: abc", "--header=Ocp-Apim-Subscription-Key: k", "-H", "User-Agent: probe/1"},
			[]string{"-H", "X-Session-Id: " + Marker, "-H", "Authentication: " + Marker, "--header=Ocp-Apim-Subscription-Key: " + Marker, "-H", "User-Agent: probe/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Args(tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Args(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if again := Args(got); !slices.Equal(again, got) {
				t.Errorf("Args is not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestArgsDoesNotModifyItsInput(t *testing.T) {
	in := []string{"--token", "s3cret"}
	Args(in)
	if in[1] != "s3cret" {
		t.Errorf("Args changed its input: %q", in)
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"nothing secret here: GET /sleep?ms=5 took 3 ms", "nothing secret here: GET /sleep?ms=5 took 3 ms"},
		{"postgres://user:pass@host/db", "postgres://user:" + Marker + "@host/db"},
		{"http://user:p@ss@host:80/x", "http://user:" + Marker + "@host:80/x"},
		{"http://user@host/x", "http://user@host/x"},
		{"mysql://root:@localhost/x", "mysql://root:" + Marker + "@localhost/x"},
		{"https://host/x?access_token=abc&page=2", "https://host/x?access_token=" + Marker + "&page=2"},
		{"https://host/x?apiKey=abc", "https://host/x?apiKey=" + Marker},
		{"https://host/x?sig=abc&se=2024", "https://host/x?sig=" + Marker + "&se=2024"},
		{"host=db password='two words' dbname=x", "host=db password=" + Marker + " dbname=x"},
		{"GITHUB_TOKEN=ghp_x AWS_SECRET_ACCESS_KEY=k ./server", "GITHUB_TOKEN=" + Marker + " AWS_SECRET_ACCESS_KEY=" + Marker + " ./server"},
		{"server --no-tui --token s3cret --rate 5", "server --no-tui --token " + Marker + " --rate 5"},
		{`server --token "a b" -x`, "server --token " + Marker + " -x"},
		{"server -H 'Authorization: Bearer abc' --rate 5", "server -H 'Authorization: Bearer " + Marker + "' --rate 5"},
		{`curl -H "X-Api-Key: k" -H "Accept: */*"`, `curl -H "X-Api-Key: ` + Marker + `" -H "Accept: */*"`},
		{"target: -H Cookie: session=abc", "target: -H Cookie: " + Marker},
		{"agent: HTTP 401: schedscope agent: missing or wrong bearer token", "agent: HTTP 401: schedscope agent: missing or wrong bearer token"},
		{"token: not a header, so kept", "token: not a header, so kept"},
		{"--token-file /run/tok SCHEDSCOPE_AGENT_TOKEN_FILE=/x", "--token-file /run/tok SCHEDSCOPE_AGENT_TOKEN_FILE=/x"},
	} {
		got := Text(tc.in)
		if got != tc.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if again := Text(got); again != got {
			t.Errorf("Text is not idempotent: %q -> %q", got, again)
		}
	}
}

func TestHeader(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"Authorization", "Bearer abc", "Bearer " + Marker},
		{"authorization", "abc", Marker},
		{"Proxy-Authorization", "Basic dXNlcjpwYXNz", "Basic " + Marker},
		{"Cookie", "a=b; c=d", Marker},
		{"Set-Cookie", "id=a3fWa; Expires=Thu", Marker},
		{"X-Api-Key", "k", Marker},
		{"X-Auth-Token", "t", Marker},
		{"Private-Token", "t", Marker},
		{"Accept", "text/plain", "text/plain"},
		{"Referer", "http://u:p@host/", "http://u:" + Marker + "@host/"},
		{"Authorization", "Bearer " + Marker, "Bearer " + Marker},
		// Names that do not say they hold a credential (the probe's three):
		// only a header known to be harmless keeps its value.
		{"X-Session-Id", "sess-123", Marker},
		{"Authentication", "Bearer abc", Marker},
		{"Ocp-Apim-Subscription-Key", "0123abcd", Marker},
		{"X-Custom", "first-word secret", Marker},
		{"X-Session-Id", Marker, Marker},
		{"Accept-Encoding", "gzip, br", "gzip, br"},
		{"user-agent", "schedscope/1 (probe)", "schedscope/1 (probe)"},
		{"Content-Type", "application/json", "application/json"},
	} {
		if got := Header(tc.name, tc.value); got != tc.want {
			t.Errorf("Header(%q, %q) = %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestHeaderLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer abc", "Authorization: Bearer " + Marker},
		{"authorization:abc", "authorization:" + Marker},
		{"Host: example.com", "Host: example.com"},
		{"no colon password=x", "no colon password=" + Marker},
	} {
		if got := HeaderLine(tc.in); got != tc.want {
			t.Errorf("HeaderLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestURL(t *testing.T) {
	in := "http://u:urlpass@127.0.0.1:8080/sleep?ms=5&password=qpass"
	want := "http://u:" + Marker + "@127.0.0.1:8080/sleep?ms=5&password=" + Marker
	if got := URL(in); got != want {
		t.Errorf("URL(%q) = %q, want %q", in, got, want)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"token": true, "--agent-token": true, "PGPASSWORD": true, "MYSQL_PWD": true, "client_secret": true,
		"X-Api-Key": true, "apiKey": true, "accessToken": true, "auth": true, "key": true, "passphrase": true,
		"token-file": false, "SCHEDSCOPE_AGENT_TOKEN_FILE": false, "token_url": false, "max-tokens": false,
		"rate": false, "author": false, "keyboard": false, "bypass": false, "monkey": false, "H": false,
	} {
		if got := secretName(name); got != want {
			t.Errorf("secretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzText checks that Text never panics, is idempotent, and leaves a
// secret flag's value out of its answer.
func FuzzText(f *testing.F) {
	for _, s := range []string{"--token s3cret", "http://u:p@h/?password=x", "-H 'Authorization: Bearer x'", "a=b&c=d", "Cookie: x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		if again := Text(got); again != got {
			t.Errorf("Text(%q) = %q, then %q", s, got, again)
		}
		secret := "zq" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' {
				return r
			}
			return -1
		}, s) + "qz"
		if out := Text(s + " --token " + secret); strings.Contains(out, secret) {
			t.Errorf("Text kept the token: %q", out)
		}
	})
}
