//! The arguments of a generated kernel: each one's name, C type, and how it is taken.

/// How a kernel takes one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A value, the same for every element.
    Scalar,
    /// An array the operation reads (`const T *`).
    Input,
    /// An array the operation writes (`T *`), and may read.
    Output,
}

/// One argument of a generated kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Param<'a> {
    /// Its name: the operation names the scalar, or an array's element, by it.
    pub name: &'a str,
    /// The C type of the scalar or of the array's elements (`float`, `unsigned char`).
    pub c_type: &'a str,
    /// How it is taken.
    pub role: Role,
}

impl<'a> Param<'a> {
    /// The argument `name` of C type `c_type`, taken as `role`.
    pub const fn new(name: &'a str, c_type: &'a str, role: Role) -> Self {
        Param { name, c_type, role }
    }

    /// True for an array (an input or an output).
    pub fn is_array(&self) -> bool {
        self.role != Role::Scalar
    }
}
