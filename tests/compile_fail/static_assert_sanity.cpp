// expect: infer compile-fail harness works
// Proves the compile-fail harness itself: this file must fail to build with the message above.

template <class T>
inline constexpr bool false_v = false;

static_assert(false_v<int>, "infer compile-fail harness works");
