//! Links the `mcpcassette` binary as a position-dependent executable on
//! GNU/Linux: a PIE must have its 31 000 relative relocations applied by
//! the dynamic loader at every start, touching 0.5 MB of `.data.rel.ro`,
//! about 15 % of what a replay costs from spawn to its first answer
//! (docs/benchmarks.md). Shared libraries, the stack and the heap are
//! still placed at random.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
