//! Quantisation of points to grid cells: edges, errors, flat boxes.

use lumbre_morton::*;

#[test]
fn quantizer_edges() {
    let q = Quantizer::new([-1.0; 3], [1.0; 3], 4).unwrap();
    assert_eq!(q.cell([1.0; 3], 0).unwrap(), [15; 3], "max face lands in the last cell");
    assert_eq!(q.cell([-1.0; 3], 0).unwrap(), [0; 3]);
    assert_eq!(q.cell([0.0, 1.0001, 0.0], 3), Err(QuantizeError::OutOfBounds { index: 3, point: [0.0, 1.0001, 0.0] }));
    assert!(q.cell([f32::NAN, 0.0, 0.0], 0).is_err());
    assert_eq!(q.cell_clamped([f32::INFINITY, f32::NEG_INFINITY, f32::NAN]), [15, 0, 0]);
    assert_eq!(Quantizer::new([0.0; 3], [1.0; 3], 22), Err(QuantizeError::BadBits(22)));
    assert_eq!(Quantizer::new([0.0; 3], [f32::NAN, 1.0, 1.0], 3), Err(QuantizeError::BadBox));
    assert_eq!(Quantizer::new([1.0; 3], [0.0; 3], 3), Err(QuantizeError::BadBox));
    // A flat box puts everything in cell 0 of that axis.
    let flat = Quantizer::new([0.0; 3], [1.0, 1.0, 0.0], 3).unwrap();
    assert_eq!(flat.cell([0.5, 0.5, 0.0], 0).unwrap(), [4, 4, 0]);
}
