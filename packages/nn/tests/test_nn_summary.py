"""tf.summary writes TensorBoard event files; TensorBoard's own reader reads them back."""
import io

import numpy as np
import pytest

import tapeflow as tf

from nn_testutil import event_accumulator as _ea

event_accumulator = _ea()


def _read(logdir):
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"scalars": 0, "histograms": 0,
                                                                         "images": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_the_seeds_summary_loop_writes_loss_every_100_steps(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        for step in range(1, 1001):
            loss = 1 - 0.001 * step
            if step % 100 == 0:
                assert tf.summary.scalar("loss", loss, step=step)
    writer.close()
    events = _read(tmp_path).Scalars("loss")
    assert [e.step for e in events] == list(range(100, 1001, 100))
    np.testing.assert_allclose([e.value for e in events], [1 - 0.001 * s for s in range(100, 1001, 100)],
                               rtol=1e-6)


def test_scalar_histogram_image_text_round_trip(tmp_path, rng):
    w = rng.normal(size=(1000,)).astype(np.float32)
    img = rng.random((2, 8, 8, 1)).astype(np.float32)
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=7):
        assert tf.summary.scalar("acc", tf.constant(0.75))
        assert tf.summary.scalar("var", tf.Variable(2.5), step=8)
        assert tf.summary.histogram("weights", tf.constant(w), buckets=20)
        assert tf.summary.image("digits", tf.constant(img), max_outputs=2)
        assert tf.summary.image("one", tf.constant((img[:1] * 255).astype(np.uint8)))
        assert tf.summary.text("note", "hello tapeflow")
        tf.summary.flush()
    acc = _read(tmp_path)
    tags = acc.Tags()
    assert set(tags["scalars"]) == {"acc", "var"}
    (a,), (v,) = acc.Scalars("acc"), acc.Scalars("var")
    assert (a.step, a.value, v.step, v.value) == (7, 0.75, 8, 2.5)
    (h,) = acc.Histograms("weights")
    hv = h.histogram_value
    assert hv.num == 1000 and len(hv.bucket) == 20 and sum(hv.bucket) == 1000
    assert hv.min == pytest.approx(w.min()) and hv.max == pytest.approx(w.max())
    assert hv.sum == pytest.approx(float(w.astype(np.float64).sum()), rel=1e-6)
    counts, _ = np.histogram(w.astype(np.float64), bins=20, range=(hv.min, hv.max))
    # bucket i counts the values in [left, right), the last one its right edge too, as NumPy's
    np.testing.assert_array_equal(hv.bucket, counts)
    assert set(tags["images"]) == {"digits/image/0", "digits/image/1", "one"}
    from PIL import Image

    (im,) = acc.Images("digits/image/1")
    decoded = np.asarray(Image.open(io.BytesIO(im.encoded_image_string)))
    assert (im.width, im.height) == (8, 8) and decoded.shape == (8, 8)
    np.testing.assert_allclose(decoded, np.round(img[1, :, :, 0] * 255), atol=1)
    (t,) = acc.Tensors("note")
    assert t.tensor_proto.string_val == [b"hello tapeflow"] and t.step == 7


def test_no_default_writer_and_record_if(tmp_path):
    assert tf.summary.scalar("x", 1.0, step=0) is False
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with tf.summary.record_if(lambda: False):
            assert tf.summary.scalar("x", 1.0, step=1) is False
        with pytest.raises(ValueError, match="no step set"):
            tf.summary.scalar("x", 1.0)
        tf.summary.experimental.set_step(3)
        assert tf.summary.scalar("x", 2.0)
        tf.summary.experimental.set_step(None)
    writer.close()
    assert [(e.step, e.value) for e in _read(tmp_path).Scalars("x")] == [(3, 2.0)]


def test_bad_summary_values():
    with tf.summary.create_noop_writer().as_default():
        assert tf.summary.scalar("x", [1.0, 2.0], step=0) is False  # dropped before any check
    writer = tf.summary.create_file_writer(io_dir())
    with writer.as_default(step=0):
        with pytest.raises(tf.errors.InvalidArgumentError, match="needs one value"):
            tf.summary.scalar("x", [1.0, 2.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\(k, h, w, c\)"):
            tf.summary.image("x", tf.zeros([8, 8]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="needs a string"):
            tf.summary.text("x", 3)
    writer.close()


def io_dir():
    import tempfile

    return tempfile.mkdtemp()
