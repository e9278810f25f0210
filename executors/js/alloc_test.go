package js

import (
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// TestAllocationChecked: one-step allocations over the memory limit are
// refused before they happen, by every route to the constructor, even
// when the tool catches the exception.
func TestAllocationChecked(t *testing.T) {
	for _, code := range []string{
		"new ArrayBuffer(2 ** 31); return 1",
		"new ArrayBuffer(300 * 1024 * 1024); return 1",
		"new Uint8Array(2 ** 31); return 1",
		"new Float64Array(2 ** 26); return 1",
		"new BigUint64Array(2 ** 26); return 1",
		"new Int32Array('100000000'); return 1",
		"new (new ArrayBuffer(1).constructor)(2 ** 31); return 1",
		"new (new Uint16Array(1).constructor)(2 ** 30); return 1",
		"new (Object.getPrototypeOf(new Uint8Array(1)).constructor)(2 ** 31); return 1",
		"Reflect.construct(ArrayBuffer, [2 ** 31]); return 1",
		"class Big extends Uint8Array {}; new Big(2 ** 31); return 1",
		"Uint8Array.from({ length: 2 ** 31 }); return 1",
		"Float32Array.from({ length: 2 ** 29 }, () => 1); return 1",
		"new Uint8Array({ length: 2 ** 31 }); return 1",
		"const C = new Uint8Array(1).map((x) => x).constructor; new C(2 ** 31); return 1",
		"new Uint8Array(1).constructor[Symbol.species].from({ length: 2 ** 31 }); return 1",
		"const a = new Array(2 ** 30); return 1",
		"const a = Array(2 ** 30); return 1",
		"const a = [].constructor(2 ** 30); return 1",
		"Array.from({ length: 2 ** 30 }); return 1",
		"try { new ArrayBuffer(2 ** 31) } catch (e) {} return 'caught'",
		"try { new Uint8Array(2 ** 31) } catch (e) {} for (;;) {}",
	} {
		start := time.Now()
		_, err := run(t, false, code, "", executors.Limits{MemoryBytes: 256 << 20, Timeout: 20 * time.Second})
		if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitMemory {
			t.Errorf("%s: %v, want limit_exceeded memory", code, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", code, d)
		}
	}
}

// TestAllocationOrdinary: constructors keep working and keep their
// identity under the guards.
func TestAllocationOrdinary(t *testing.T) {
	code := `
		const b = new ArrayBuffer(16), u = new Uint8Array(b), f = new Float64Array([1.5, 2.5]);
		class Sub extends Uint8Array {}
		return {
			views: u.length === 16 && new DataView(b).byteLength === 16,
			instance: u instanceof Uint8Array && b instanceof ArrayBuffer && new Sub(2) instanceof Uint8Array,
			ctor: u.constructor === Uint8Array && [].constructor === Array && Array.isArray(new Array(3)),
			from: Array.from('abc').join('') + Uint8Array.of(1, 2).join(',') + Array.of(7).length,
			arrays: [new Array(3).length, Array(1, 2).length, new Array('x')[0], f[1]],
			map: Array.from(new Set([1, 1, 2])).length,
			mapTyped: u.map((x) => x + 1)[0],
			sliced: f.slice(1)[0],
		}`
	res, err := run(t, false, code, "", executors.Limits{})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	want := `{"views":true,"instance":true,"ctor":true,"from":"abc1,21","arrays":[3,2,"x",2.5],"map":2,"mapTyped":1,"sliced":2.5}`
	if string(res.Value) != want {
		t.Errorf("got  %s\nwant %s", res.Value, want)
	}
}
