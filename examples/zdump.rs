fn main() {
    let a: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&a[1]).unwrap();
    let p = zenpak::zen::ZenPackage::read(&bytes, a[2].parse().unwrap()).unwrap();
    println!("{}", serde_json::to_string_pretty(&p).unwrap());
}
