libfuzzer_sys::fuzz_target!(|data: &[u8]| pw_fuzz::frames(data));

fn main() {
    pw_fuzz::driver()
}
