package js

import (
	"reflect"

	"github.com/dop251/goja/ast"
)

// maxCodeDepth bounds how deeply the tool's syntax tree nests, counted in
// tree nodes. goja's compiler recurses over the tree, and its time grows
// with the square of the depth on some shapes (a 100,000-term chain
// 1+1+…+1 took minutes to compile, 60,000 nested arrows a minute to
// parse): code nested past this is refused with limit_exceeded before it
// is compiled. Ordinary code stays far below it (the corpus test's
// snippets nest 20 nodes deep at most).
const maxCodeDepth = 1000

var astPkg = reflect.TypeFor[ast.Program]().PkgPath()

// astDepth returns how deeply prog's nodes nest, up to limit+1. It walks
// the tree with an explicit stack, so hostile nesting cannot recurse in
// Go, and visits each node once (goja keeps hoisted declarations in a
// second list, which would otherwise revisit subtrees).
func astDepth(prog *ast.Program, limit int) int {
	type item struct {
		v     reflect.Value
		depth int
	}
	seen := map[uintptr]bool{}
	stack := []item{{reflect.ValueOf(prog), 0}}
	deepest := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v, depth := it.v, it.depth
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, item{v.Elem(), depth})
			}
		case reflect.Pointer:
			if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkg {
				continue
			}
			if seen[v.Pointer()] {
				continue
			}
			seen[v.Pointer()] = true
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest
				}
			}
			stack = append(stack, item{v.Elem(), depth})
		case reflect.Slice:
			for i := v.Len() - 1; i >= 0; i-- {
				stack = append(stack, item{v.Index(i), depth})
			}
		case reflect.Struct:
			if v.Type().PkgPath() != astPkg {
				continue
			}
			for i := v.NumField() - 1; i >= 0; i-- {
				if f := v.Field(i); v.Type().Field(i).IsExported() {
					stack = append(stack, item{f, depth})
				}
			}
		}
	}
	return deepest
}
