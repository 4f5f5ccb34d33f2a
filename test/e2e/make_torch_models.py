"""Exports test models with PyTorch (random weights, fixed seed) at opset 17:
torchvision resnet18 and mobilenet_v2 (BatchNorm statistics randomised, or mobilenet's outputs
are ~1e-9 and prove nothing) and a small GPT-style decoder.
Usage: make_torch_models.py OUT_DIR
"""
import os
import sys

import torch
import torchvision


def randomise_bn(model):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    return model


class TinyGpt(torch.nn.Module):
    def __init__(self, vocab=1000, dim=64, heads=4, layers=2, ctx=64):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Embedding(ctx, dim)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.norm = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, tokens):
        n = tokens.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        h = self.tok(tokens) + self.pos(torch.arange(n).unsqueeze(0))
        return self.head(self.norm(self.blocks(h, mask=mask)))


def export(model, example, path, input_name):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, example, path, opset_version=17, input_names=[input_name], output_names=["output"])


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    export(randomise_bn(torchvision.models.resnet18()), torch.randn(1, 3, 224, 224), os.path.join(out, "resnet18.onnx"), "input")
    export(randomise_bn(torchvision.models.mobilenet_v2()), torch.randn(1, 3, 224, 224), os.path.join(out, "mobilenet_v2.onnx"), "input")
    export(TinyGpt(), torch.randint(0, 1000, (1, 16)), os.path.join(out, "gpt_decoder.onnx"), "tokens")


if __name__ == "__main__":
    main(sys.argv[1])
