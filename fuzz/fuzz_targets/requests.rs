libfuzzer_sys::fuzz_target!(|data: &[u8]| pw_fuzz::requests(data));

fn main() {
    pw_fuzz::driver()
}
