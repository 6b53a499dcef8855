package js

import (
	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

// typeChecks are V8's own type predicates, by the index util.types uses
// (internal/types.js holds the same list): exact where a JavaScript check
// could be fooled by Symbol.toStringTag or a prototype swap, and cheap,
// where the npm util polyfill loads a dozen packages to approximate them.
var typeChecks = [...]func(*v8.Value) bool{
	(*v8.Value).IsArgumentsObject,
	(*v8.Value).IsArrayBuffer,
	(*v8.Value).IsAsyncFunction,
	(*v8.Value).IsBigInt64Array,
	(*v8.Value).IsBigIntObject,
	(*v8.Value).IsBigUint64Array,
	(*v8.Value).IsDataView,
	(*v8.Value).IsDate,
	(*v8.Value).IsExternal,
	(*v8.Value).IsFloat32Array,
	(*v8.Value).IsFloat64Array,
	(*v8.Value).IsGeneratorFunction,
	(*v8.Value).IsGeneratorObject,
	(*v8.Value).IsInt8Array,
	(*v8.Value).IsInt16Array,
	(*v8.Value).IsInt32Array,
	(*v8.Value).IsMap,
	(*v8.Value).IsMapIterator,
	(*v8.Value).IsModuleNamespaceObject,
	(*v8.Value).IsNativeError,
	(*v8.Value).IsNumberObject,
	(*v8.Value).IsPromise,
	(*v8.Value).IsProxy,
	(*v8.Value).IsRegExp,
	(*v8.Value).IsSet,
	(*v8.Value).IsSetIterator,
	(*v8.Value).IsSharedArrayBuffer,
	(*v8.Value).IsStringObject,
	(*v8.Value).IsSymbolObject,
	(*v8.Value).IsTypedArray,
	(*v8.Value).IsUint8Array,
	(*v8.Value).IsUint8ClampedArray,
	(*v8.Value).IsUint16Array,
	(*v8.Value).IsUint32Array,
	(*v8.Value).IsWeakMap,
	(*v8.Value).IsWeakSet,
}

// bridgeIsType answers util.types' predicate index for v: V8's own
// check, which JavaScript cannot fool.
func bridgeIsType(r *rt, a *callArgs) (*v8.Value, error) {
	v, i := a.value(0), a.int(1)
	if v == nil || i < 0 || i >= len(typeChecks) {
		return nil, errno.EINVAL
	}
	return r.boolean(typeChecks[i](v)), nil
}
