"""Editing what zarr-python wrote, and zarr-python reading the edits: attributes key by key (NaN values
kept as zarr-python writes them) and the fill value of an array (never-written chunks read the new
value; stored ones keep theirs)."""
import math

import numpy as np

import libzarr
import zpy


def test_attributes_and_fill_value_edited_by_libzarr(tmp_path):
    z = zpy.create(tmp_path, shape=(6,), chunks=(2,), dtype="<f8", fill_value=0.0,
                   attrs={"units": "m", "scale": math.nan, "keep": [1, 2]})
    z[:2] = [1.0, 2.0]
    with libzarr.open_store(tmp_path, "a") as s:
        with s.open_array("") as a:
            a.update_attrs('{"units": "km", "added": {"x": NaN}}')
            a.delete_attr("scale")
        s.set_fill_value("", -7.5)
    z = zpy.open_array(tmp_path)
    attrs = z.attrs.asdict()
    assert attrs["units"] == "km" and attrs["keep"] == [1, 2] and "scale" not in attrs
    assert math.isnan(attrs["added"]["x"])
    assert z.fill_value == -7.5
    np.testing.assert_array_equal(zpy.read(z), [1.0, 2.0, -7.5, -7.5, -7.5, -7.5])
