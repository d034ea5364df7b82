import numpy as np
import pytest

from iclr25.{{module}} import example


@pytest.mark.parametrize("bad", [[], [[1.0]], [np.nan]])
def test_bad_input_names_the_argument(bad):
    with pytest.raises(ValueError, match="x must be"):
        example(bad)
