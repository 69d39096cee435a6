//! [`dense_enum!`](crate::dense_enum): a fieldless enum numbered densely
//! from 0, with its variant count and every variant in order, written once
//! for every enum that indexes per-variant counters (the drop reasons here,
//! fibre-net's wire-format errors): a variant added to the list is counted
//! and listed with no other edit.

/// Declares a fieldless enum and, in an `impl`, `COUNT` (how many variants
/// it has), `ALL` (every variant, in declaration order) and `index()` (a
/// variant's place in `ALL`, in `0..COUNT`).
///
/// ```
/// fibre_base::dense_enum! {
///     /// A colour.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub enum Colour {
///         /// Red.
///         Red,
///         /// Green.
///         Green,
///     }
/// }
/// assert_eq!(Colour::COUNT, 2);
/// assert_eq!(Colour::ALL[Colour::Green.index()], Colour::Green);
/// ```
#[macro_export]
macro_rules! dense_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident, )+
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            /// The number of variants: the length of a per-variant counter
            /// array.
            pub const COUNT: usize = [$(stringify!($variant)),+].len();

            /// Every variant, in [`Self::index`] order.
            pub const ALL: [$name; $name::COUNT] = [$($name::$variant),+];

            /// A dense index in `0..COUNT`: the variant's place in
            /// [`Self::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }
    };
}
