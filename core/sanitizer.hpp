#pragma once
// Whether this build runs under AddressSanitizer (GCC's __SANITIZE_ADDRESS__ or
// Clang's __has_feature): ASan reserves terabytes of address space up front, so
// address-space limits (RLIMIT_AS, `ulimit -v`) cannot be used there.
namespace fhd {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

}  // namespace fhd
