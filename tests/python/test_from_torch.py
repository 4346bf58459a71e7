"""modelstat.from_torch: a torch.nn.Module exported in memory and analysed; its totals equal the
CLI's JSON for the same export written to a file."""
import pytest

torch = pytest.importorskip("torch")  # Debian python3-torch, installed by tools/dev.sh

import modelstat


def cli_totals(cli, tmp_path, module, args, dims, **export_kwargs):
    path = str(tmp_path / "exported.onnx")
    with torch.no_grad():
        torch.onnx.export(module, args, path, **export_kwargs)
    dim_args = [a for k, v in dims.items() for a in ("--dim", "%s=%d" % (k, v))]
    return cli.json(path, *dim_args)["totals"]


def test_resnet18(cli, tmp_path):
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    r = modelstat.from_torch(model, x, input_names=["image"])
    assert isinstance(r, modelstat.Analysis)
    assert r.totals == cli_totals(cli, tmp_path, model, (x,), {}, input_names=["image"])
    # torchvision publishes 1.81 "GFLOPS" (= GMACs) for resnet18 at 224x224.
    assert abs(r.totals["macs"] / 1.81e9 - 1) < 0.005


class Small(torch.nn.Module):
    """Conv 3->8 3x3 pad 1 on 16x16, ReLU, Linear 2048->10: per sample 8*16*16*27 + 2048*10 MACs."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


MACS_PER_SAMPLE = 8 * 16 * 16 * 3 * 3 * 3 + 2048 * 10


@pytest.mark.parametrize("batch", [1, 4])
def test_dynamic_batch_axis(cli, tmp_path, batch):
    model = Small().eval()
    x = torch.randn(batch, 3, 16, 16)
    kwargs = dict(input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    r = modelstat.from_torch(model, x, **kwargs)
    assert r.totals["macs"] == batch * MACS_PER_SAMPLE
    assert r.totals == cli_totals(cli, tmp_path, model, (x,), {"batch": batch}, **kwargs)
    # The axis stays symbolic in the graph: another binding gives another batch's figures.
    assert modelstat.from_torch(model, x, dims={"batch": 5}, **kwargs).totals["macs"] == 5 * MACS_PER_SAMPLE


def test_dynamic_axes_as_a_list_and_dims_override(cli, tmp_path):
    model = Small().eval()
    x = torch.randn(2, 3, 16, 16)
    r = modelstat.from_torch(model, x, input_names=["x"], dynamic_axes={"x": [0]})
    assert r.totals["macs"] == 2 * MACS_PER_SAMPLE
    r8 = modelstat.from_torch(model, x, dims={"x_dim0": 8}, input_names=["x"], dynamic_axes={"x": [0]})
    assert r8.totals["macs"] == 8 * MACS_PER_SAMPLE


def test_analyze_options_and_table():
    r = modelstat.from_torch(Small().eval(), torch.randn(1, 3, 16, 16), analyze_options={"top": 1})
    assert len(r.record["hotspots"]) == 1
    assert "Totals" in str(r)
