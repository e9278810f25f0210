package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// Worker token files. A token is shown once, when a worker is registered
// or its token rotated; --token-file FILE (or --save-token, for the
// default place) writes it to a file of mode 0600 instead, which is what
// `toolcage mcp --worker NAME` reads: never a flag value, which any user
// could read from the process list.

// tokenRE is a worker token's form (store.TokenPrefix, 52 base32 chars).
var tokenRE = regexp.MustCompile(`^tcw_[a-z2-7]{52}$`)

// defaultTokenFile is where --save-token writes NAME's token and where
// `toolcage mcp --worker NAME` looks for it: $XDG_CONFIG_HOME/toolcage/
// workers/NAME.token (~/.config/… without XDG_CONFIG_HOME).
func defaultTokenFile(worker string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", inputErrorf("no config directory for the token file (%v); give --token-file", err)
	}
	return filepath.Join(dir, "toolcage", "workers", worker+".token"), nil
}

// writeTokenFile writes token to path, mode 0600, replacing any file
// there at once (a reader never sees half a token). Its directory is made
// 0700 when missing.
func writeTokenFile(path, token string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	tmp := f.Name()
	_, err = f.WriteString(token + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("token file: %w", err)
	}
	return nil
}

// readTokenFile reads a worker token from path. The file must be a
// regular file no one else may read or write (as ssh asks of a key), and
// hold one token.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", codedErrorf(errdefs.Unauthorized, "no token file %s: write one with 'toolcage worker token rotate NAME --token-file %s' (or --save-token), or give --token-file", path, path)
	}
	if err != nil {
		return "", inputErrorf("token file: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", inputErrorf("token file: %v", err)
	}
	if !st.Mode().IsRegular() {
		return "", inputErrorf("token file %s is not a regular file", path)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", inputErrorf("token file %s is open to others (mode %04o); chmod 600 it, and rotate the token if others may have read it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", inputErrorf("token file: %v", err)
	}
	tok := strings.TrimSpace(string(b))
	if !tokenRE.MatchString(tok) {
		return "", inputErrorf("token file %s does not hold a worker token (tcw_…)", path)
	}
	return tok, nil
}

// tokenFileFlags are worker add's and token rotate's ways to keep the
// token in a file rather than print it.
func tokenFileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "token-file", Usage: "write the token to `TFILE` (mode 0600) instead of printing it"},
		&cli.BoolFlag{Name: "save-token", Usage: "write the token to the file toolcage mcp --worker NAME reads by default"},
	}
}

// tokenSave is where a command was asked to write a new token.
type tokenSave struct {
	file string
	dflt bool
}

func tokenSaveOf(cCtx *cli.Context) (tokenSave, error) {
	s := tokenSave{file: cCtx.String("token-file"), dflt: cCtx.Bool("save-token")}
	if s.file != "" && s.dflt {
		return s, usageErrorf(cCtx, "give --token-file or --save-token, not both")
	}
	return s, nil
}

func (s tokenSave) wanted() bool { return s.file != "" || s.dflt }

// write writes worker's token where s says and returns the path.
func (s tokenSave) write(worker, token string) (string, error) {
	path := s.file
	if s.dflt {
		var err error
		if path, err = defaultTokenFile(worker); err != nil {
			return "", err
		}
	}
	if err := writeTokenFile(path, token); err != nil {
		return "", fmt.Errorf("the token was issued but not saved (rotate it to try again): %w", err)
	}
	return path, nil
}

// answer is a command's answer with a new token for worker: written
// where s says, when it says anywhere (then the human line is saved(path)
// and --json leaves the token out and names the file), or else shown (the
// human lines) or the API's answer raw (--json).
func (s tokenSave) answer(a *app, worker string, out api.WorkerToken, raw json.RawMessage, jsonOut bool, saved func(path string) string, shown string) error {
	if !s.wanted() {
		if jsonOut {
			return writeJSON(a.out, raw)
		}
		_, err := fmt.Fprint(a.out, shown)
		return err
	}
	path, err := s.write(worker, out.Token)
	if err != nil {
		return err
	}
	if jsonOut {
		raw, err := savedTokenJSON(out, path)
		if err != nil {
			return err
		}
		return writeJSON(a.out, raw)
	}
	_, err = fmt.Fprint(a.out, saved(path))
	return err
}

// savedTokenJSON is --json's answer when the token went to a file: the
// API's shape with the token left out and the file named.
func savedTokenJSON(out api.WorkerToken, path string) (json.RawMessage, error) {
	return json.Marshal(struct {
		Worker    api.Worker `json:"worker"`
		TokenID   string     `json:"token_id"`
		TokenFile string     `json:"token_file"`
	}{out.Worker, out.TokenID, path})
}
