package repocode

import "testing"

func TestFile(t *testing.T) {
	for _, p := range []string{".git/config", "./.git/hooks/pre-commit", "/workspace/.git/config", "sub/.git/info/attributes", ".git",
		".gitattributes", "a/.gitmodules", "Makefile", "GNUmakefile", "build/rules.mk", "package.json", "web/.npmrc", ".envrc",
		".vscode/tasks.json", ".idea/workspace.xml", ".husky/pre-commit", "x/../.git/config", ".GIT/config", ".exrc"} {
		if !File(p) {
			t.Errorf("File(%q) = false", p)
		}
	}
	for _, p := range []string{"README.md", "main.go", "notes/git.txt", ".gitignore", "make.txt", "package-lock.json.bak", "src/makefile.go",
		"docs/.github-notes", "out.log", "/tmp/x"} {
		if File(p) {
			t.Errorf("File(%q) = true", p)
		}
	}
}
