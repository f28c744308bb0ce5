libfuzzer_sys::fuzz_target!(|data: &[u8]| pw_fuzz::topology_file(data));

fn main() {
    pw_fuzz::driver()
}
