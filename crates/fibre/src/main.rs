fn main() {
    println!("fibre: under construction");
}
