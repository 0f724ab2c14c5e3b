"""An empty or malformed --arch is bad input refused before anything is written (it was
taken as 'no --arch' and compiled for the device's default)."""
import pytest

from search.cli.main import main

LAYER, CONFIG = "cin=8,hin=16,cout=16,kh=3,pad=1", "x=8,y=8,z=8,alpha=2"


@pytest.mark.parametrize("arch", ["", "80", "sm80"])
def test_bad_arch_is_refused_before_emit(arch, tmp_path, capsys):
    out = tmp_path / "k.cu"
    code = main(["kernel", "--layer", LAYER, "--config", CONFIG, "--compile", "--arch", arch,
                 "--emit", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "arch must look like sm_80" in err[0]
    assert not out.exists()
