#!/usr/bin/env python3
"""Exports the model zoo under tests/models/zoo/ (issue #23): torchvision's and transformers' own
classes at reduced widths with random weights, through the torch_to_ir exporter, each with its
weights and a PyTorch reference. Runs where PyTorch is (the GPU machine), never in `make test`:

    PYTHONPATH=.exporter python3 tests/models/export_zoo.py OUTDIR [NAME...]

Per model OUTDIR/NAME/ gets model.json (the exporter's IR, exactly as it writes it),
weights.safetensors (state_dict keys plus non-persistent buffers; floating weights rounded to
fp16 for CNNs, bf16 for the language models, stored in that dtype) and reference.safetensors (one
tensor per graph input and output, named as the IR names them, computed by PyTorch in float32 on
the CPU from exactly the stored weights). Models exported with grad enabled (the refusal case)
get grad.json only. OUTDIR/zoo.json lists what happened to each (exported or the error), with
node counts and the op set. The weights are made with a fixed seed per model.
"""
import json
import os
import sys
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

from torch_ir import extract_ir

OUT = sys.argv[1]
ONLY = set(sys.argv[2:])
LOG = {}


def rounded(model, dtype):
    """Rounds every floating parameter and buffer to dtype and back, so the fp32 reference is
    computed from exactly the stored values."""
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.to(dtype).float())


def randomize_norms(model, gen):
    """Non-trivial running statistics and affine parameters, as a trained net has."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.normal_(0, 0.1, generator=gen)
                m.running_var.uniform_(0.5, 1.5, generator=gen)
            if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm)) and \
                    getattr(m, "weight", None) is not None:
                m.weight.uniform_(0.5, 1.5, generator=gen)
                if m.bias is not None:
                    m.bias.normal_(0, 0.1, generator=gen)


def save_ir(ir, path):
    """The exporter's IR.save, with attributes it cannot serialize (torch.device, torch.dtype,
    torch.layout in kwargs: transformers' models have them) written as str() writes them, which
    is how the fixtures' exports spell them ("torch.float32", "cpu")."""
    with open(path, "w") as f:
        json.dump(ir.to_dict(), f, indent=2, default=str)


def tensors_of(model, dtype):
    d = {}
    # state_dict keeps tied weights under each name (GPT-2's lm_head.weight is wte's);
    # named_buffers adds the non-persistent buffers (the rotary embeddings' inv_freq).
    for k, v in list(model.state_dict(keep_vars=True).items()) + list(model.named_buffers()):
        v = v.detach().clone().contiguous()
        d[k] = v.to(dtype) if v.is_floating_point() else v
    return d


def flat_outputs(y):
    if isinstance(y, torch.Tensor):
        return [y]
    if hasattr(y, "to_tuple"):
        y = y.to_tuple()
    if isinstance(y, dict):
        y = list(y.values())
    out = []
    for e in y:
        out += flat_outputs(e)
    return out


def export(name, model, inputs, wdtype, grad_case=False, note=""):
    if ONLY and name not in ONLY:
        return
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    entry = {"note": note}
    LOG[name] = entry
    try:
        gen = torch.Generator().manual_seed(sum(map(ord, name)))
        randomize_norms(model, gen)
        model.eval()
        rounded(model, wdtype)
        entry["params"] = sum(p.numel() for p in model.parameters())
        with torch.no_grad():
            ir = extract_ir(model, tuple(inputs), model_name=name, strict=False)
            save_ir(ir, os.path.join(d, "model.json"))
            ys = flat_outputs(model(*inputs))
        ops = sorted({n.op_type for n in ir.nodes})
        entry.update(nodes=len(ir.nodes), ops=ops)
        if len(ys) != len(ir.graph_outputs):
            entry["warning"] = "outputs %d vs graph outputs %d" % (len(ys), len(ir.graph_outputs))
        ref = {}
        for meta, x in zip(ir.graph_inputs, inputs):
            ref[meta.name] = x.detach().clone().contiguous()
        for meta, y in zip(ir.graph_outputs, ys):
            ref[meta.name] = y.detach().float().clone().contiguous()
        save_file(ref, os.path.join(d, "reference.safetensors"))
        w = tensors_of(model, wdtype)
        consts = getattr(ir, "constants", {}) or {}
        missing = [k for p, k in ir.weight_name_mapping.items() if k not in w and p not in consts
                   and k not in consts]
        if missing:
            entry["missing_weights"] = missing
        save_file({k: v for k, v in w.items() if k in set(ir.weight_name_mapping.values())},
                  os.path.join(d, "weights.safetensors"))
        entry["status"] = "exported"
        if grad_case:
            with torch.enable_grad():
                for p in model.parameters():
                    p.requires_grad_(True)
                try:
                    irg = extract_ir(model, tuple(inputs), model_name=name + "_grad", strict=False)
                    save_ir(irg, os.path.join(d, "grad.json"))
                    entry["grad_ops"] = sorted({n.op_type for n in irg.nodes} - set(ops))
                except Exception as e:  # noqa: BLE001
                    entry["grad_error"] = repr(e)[:400]
    except Exception as e:  # noqa: BLE001
        entry["status"] = "failed"
        entry["error"] = repr(e)[:600]
        entry["trace"] = traceback.format_exc()[-1500:]
    print(name, entry.get("status"), entry.get("nodes"), entry.get("error", "")[:200], flush=True)


def img(n=1, c=3, h=32, w=32):
    return torch.randn(n, c, h, w, generator=torch.Generator().manual_seed(7))


def torchvision_zoo():
    import torchvision.models as tvm
    from torchvision.models import resnet as R
    from torchvision.models import regnet, mobilenetv3, efficientnet, convnext, swin_transformer
    from torchvision.models import vision_transformer, maxvit, densenet, shufflenetv2, mnasnet
    from torchvision.models.segmentation import deeplabv3, fcn
    from torchvision.models._utils import IntermediateLayerGetter

    def small_resnet(block, layers, div, **kw):
        """torchvision's ResNet with every stage's width divided by div (the builder has no width
        knob): _make_layer is wrapped while the model is built, fc follows the last stage."""
        orig = R.ResNet._make_layer
        R.ResNet._make_layer = lambda self, b, planes, blocks, stride=1, dilate=False: \
            orig(self, b, planes // div, blocks, stride, dilate)
        try:
            m = R.ResNet(block, layers, num_classes=10, **kw)
        finally:
            R.ResNet._make_layer = orig
        m.fc = nn.Linear(512 // div * block.expansion, 10)
        return m

    torch.manual_seed(1)
    export("resnet_basic", small_resnet(R.BasicBlock, [1, 1, 1, 1], 4), [img()], torch.float16)
    export("resnext", small_resnet(R.Bottleneck, [1, 1, 1, 1], 4, groups=4, width_per_group=16),
           [img()], torch.float16)
    export("wide_resnet", small_resnet(R.Bottleneck, [1, 1, 1, 1], 8, width_per_group=128),
           [img()], torch.float16)
    export("mobilenet_v2", tvm.MobileNetV2(num_classes=10, width_mult=0.25), [img()], torch.float16)
    s, last = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
    export("mobilenet_v3_small", mobilenetv3.MobileNetV3(s, last // 4, num_classes=10), [img()],
           torch.float16)
    s, last = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_large", width_mult=0.25)
    export("mobilenet_v3_large", mobilenetv3.MobileNetV3(s, last // 4, num_classes=10), [img()],
           torch.float16)
    s, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    export("efficientnet_b0", efficientnet.EfficientNet(s, 0.2, last_channel=last, num_classes=10),
           [img()], torch.float16)
    s, last = efficientnet._efficientnet_conf("efficientnet_v2_s")
    s = [c for c in s][:3]
    for c in s:
        c.input_channels //= 4
        c.out_channels //= 4
        c.num_layers = 1
    export("efficientnet_v2", efficientnet.EfficientNet(s, 0.2, last_channel=128, num_classes=10),
           [img()], torch.float16)
    bp = regnet.BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8)
    export("regnet_x", regnet.RegNet(bp, num_classes=10, stem_width=8), [img()], torch.float16)
    bp = regnet.BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8,
                                             se_ratio=0.25)
    export("regnet_y", regnet.RegNet(bp, num_classes=10, stem_width=8), [img()], torch.float16)
    export("densenet", densenet.DenseNet(growth_rate=8, block_config=(2, 2, 2, 2),
                                         num_init_features=16, bn_size=2, num_classes=10),
           [img()], torch.float16)
    export("shufflenet_v2", shufflenetv2.ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128],
                                                      num_classes=10), [img()], torch.float16)
    export("mnasnet", mnasnet.MNASNet(0.25, num_classes=10), [img()], torch.float16)
    export("squeezenet", tvm.squeezenet1_1(num_classes=10), [img(h=48, w=48)], torch.float16)
    cfg = [convnext.CNBlockConfig(16, 32, 1), convnext.CNBlockConfig(32, 64, 1),
           convnext.CNBlockConfig(64, None, 1)]
    export("convnext", convnext.ConvNeXt(cfg, num_classes=10), [img()], torch.float16)
    export("vit", vision_transformer.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                                        num_heads=2, hidden_dim=32, mlp_dim=64,
                                                        num_classes=10), [img()], torch.float16)
    export("swin", swin_transformer.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1],
                                                     num_heads=[2, 2], window_size=[4, 4],
                                                     num_classes=10), [img()], torch.float16)
    export("swin_v2", swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=[4, 4],
        num_classes=10, block=swin_transformer.SwinTransformerBlockV2,
        downsample_layer=swin_transformer.PatchMergingV2), [img()], torch.float16)
    # Swin with shifted windows: at 64x64 the first stage's 16x16 map is larger than the window,
    # so odd blocks shift and build the attention mask (slice fills of a zeros tensor)
    export("swin_shift", swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
        num_classes=10), [img(h=64, w=64)], torch.float16)
    export("swin_v2_shift", swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
        num_classes=10, block=swin_transformer.SwinTransformerBlockV2,
        downsample_layer=swin_transformer.PatchMergingV2), [img(h=64, w=64)], torch.float16)
    # VGG: torchvision's class over a narrow feature stack; its classifier (fixed at 512 * 7 * 7
    # -> 4096) replaced by a small one; the adaptive pool to 7x7 upsamples the 4x4 map
    from torchvision.models import vgg
    m = vgg.VGG(vgg.make_layers([8, "M", 16, "M", 32, "M"], batch_norm=True), num_classes=10)
    m.classifier = nn.Sequential(nn.Linear(32 * 7 * 7, 64), nn.ReLU(True), nn.Dropout(),
                                 nn.Linear(64, 10))
    export("vgg", m, [img()], torch.float16)
    export("maxvit", maxvit.MaxVit(input_size=(32, 32), stem_channels=8, partition_size=2,
                                   block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                                   stochastic_depth_prob=0.0, num_classes=10),
           [img()], torch.float16)
    bb = IntermediateLayerGetter(small_resnet(R.BasicBlock, [1, 1, 1, 1], 8),
                                 return_layers={"layer4": "out"})
    head = deeplabv3.DeepLabHead(64, 3)
    export("deeplabv3", deeplabv3.DeepLabV3(bb, head), [img(h=48, w=48)], torch.float16)
    bb = IntermediateLayerGetter(small_resnet(R.BasicBlock, [1, 1, 1, 1], 8),
                                 return_layers={"layer4": "out"})
    export("fcn", fcn.FCN(bb, fcn.FCNHead(64, 3)), [img(h=48, w=48)], torch.float16)


class UNet(nn.Module):
    """A small U-Net: conv + group_norm + leaky_relu, max-pool down, transposed conv and bilinear
    and nearest upsampling up, skip concatenation."""

    def __init__(self):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.GroupNorm(4, o), nn.LeakyReLU(0.1))

        self.d1, self.d2, self.d3 = block(3, 8), block(8, 16), block(16, 32)
        self.up1 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.u1 = block(32, 16)
        self.u2 = block(24, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.d3(F.max_pool2d(b, 2))
        u = self.u1(torch.cat([self.up1(c), b], 1))
        u = F.interpolate(u, scale_factor=2, mode="bilinear", align_corners=False)
        u = self.u2(torch.cat([u, a], 1))
        y = self.out(u)
        return y + F.interpolate(F.avg_pool2d(y, 4), scale_factor=4, mode="nearest")


class AudioNet(nn.Module):
    """conv1d front end as audio models have: conv1d, group_norm, gelu, strided conv1d, mean."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(1, 16, 9, stride=4, padding=4)
        self.n1 = nn.GroupNorm(4, 16)
        self.c2 = nn.Conv1d(16, 32, 5, stride=2, padding=2, groups=2)
        self.fc = nn.Linear(32, 6)

    def forward(self, x):
        x = F.gelu(self.n1(self.c1(x)))
        x = F.gelu(self.c2(x))
        return self.fc(x.mean(-1))


class LMWrap(nn.Module):
    """input_ids -> logits (or the encoder's last hidden state), nothing else."""

    def __init__(self, m, key="logits"):
        super().__init__()
        self.m, self.key = m, key

    def forward(self, *args):
        return getattr(self.m(*args, use_cache=False) if self.key == "logits" else self.m(*args),
                       self.key)


def transformers_zoo():
    import transformers as T

    small = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    ids = torch.randint(0, 256, (1, 8), generator=torch.Generator().manual_seed(3))
    for name, cfgc, modc in [("llama", T.LlamaConfig, T.LlamaForCausalLM),
                             ("qwen2", T.Qwen2Config, T.Qwen2ForCausalLM),
                             ("mistral", T.MistralConfig, T.MistralForCausalLM),
                             ("phi3", T.Phi3Config, T.Phi3ForCausalLM),
                             ("gemma", T.GemmaConfig, T.GemmaForCausalLM)]:
        try:
            kw = dict(small)
            if name == "phi3":
                kw["pad_token_id"] = 0
            if name == "gemma":
                kw["head_dim"] = 16
            torch.manual_seed(5)
            m = modc(cfgc(**kw))
            export("hf_" + name, LMWrap(m), [ids], torch.bfloat16, grad_case=(name == "qwen2"))
        except Exception as e:  # noqa: BLE001
            LOG["hf_" + name] = {"status": "failed", "error": repr(e)[:600]}
    try:
        torch.manual_seed(5)
        m = T.GPT2LMHeadModel(T.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4,
                                           n_positions=64))
        export("hf_gpt2", LMWrap(m), [ids], torch.bfloat16)
    except Exception as e:  # noqa: BLE001
        LOG["hf_gpt2"] = {"status": "failed", "error": repr(e)[:600]}
    try:
        torch.manual_seed(5)
        m = T.BertModel(T.BertConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=128,
                                     max_position_embeddings=64))
        export("hf_bert", LMWrap(m, "last_hidden_state"), [ids], torch.bfloat16)
    except Exception as e:  # noqa: BLE001
        LOG["hf_bert"] = {"status": "failed", "error": repr(e)[:600]}
    try:
        torch.manual_seed(5)
        cfg = T.WhisperConfig(num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=1,
                              encoder_attention_heads=2, decoder_attention_heads=2,
                              encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=16,
                              vocab_size=256, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                              decoder_start_token_id=1)
        enc = T.WhisperModel(cfg).get_encoder()
        feats = torch.randn(1, 16, 32, generator=torch.Generator().manual_seed(4))
        export("hf_whisper_encoder", LMWrap(enc, "last_hidden_state"), [feats], torch.bfloat16)
    except Exception as e:  # noqa: BLE001
        LOG["hf_whisper_encoder"] = {"status": "failed", "error": repr(e)[:600]}
    static_cache_export(T)
    qwen_1_5b_meta(T)


def static_cache_export(T):
    """transformers' own on-device export: TorchExportableModuleWithStaticCache, input_ids [1,1]
    and cache_position [1] positional; KV caches are buffers mutated in place."""
    name = "hf_qwen2_static"
    if ONLY and name not in ONLY:
        return
    try:
        from transformers.integrations.executorch import TorchExportableModuleWithStaticCache
        torch.manual_seed(5)
        cfg = T.Qwen2Config(vocab_size=256, hidden_size=64, intermediate_size=128,
                            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                            max_position_embeddings=64)
        m = T.Qwen2ForCausalLM(cfg)
        m.generation_config.cache_implementation = "static"
        m.generation_config.cache_config = {"batch_size": 1, "max_cache_len": 16, "device": "cpu"}
        rounded(m, torch.bfloat16)
        m.eval()
        w = TorchExportableModuleWithStaticCache(m, batch_size=1, max_cache_len=16) \
            if "batch_size" in TorchExportableModuleWithStaticCache.__init__.__code__.co_varnames \
            else TorchExportableModuleWithStaticCache(m)

        class Pos(nn.Module):
            def __init__(self, w):
                super().__init__()
                self.w = w

            def forward(self, input_ids, cache_position):
                return self.w(input_ids=input_ids, cache_position=cache_position)

        export(name, Pos(w), [torch.tensor([[7]]), torch.tensor([0])], torch.bfloat16,
               note="static cache wrapper; greedy tokens in reference under greedy_*")
        # Greedy reference: prompt token by token through the same wrapper, then 6 tokens.
        d = os.path.join(OUT, name)
        if LOG.get(name, {}).get("status") == "exported":
            # empty the KV caches only: the rotary inv_freq is a floating buffer too
            for bn, b in w.named_buffers():
                b.zero_() if b.is_floating_point() and "cache" in bn else None
            prompt = [7, 42, 3, 99]
            toks, logits_all = [], []
            with torch.no_grad():
                tok = None
                for p in range(10):
                    t = prompt[p] if p < len(prompt) else tok
                    lg = Pos(w)(torch.tensor([[t]]), torch.tensor([p]))
                    logits_all.append(lg[0, -1].float())
                    tok = int(lg[0, -1].argmax())
                    if p >= len(prompt) - 1:
                        toks.append(tok)
            save_file({"prompt": torch.tensor(prompt), "greedy_tokens": torch.tensor(toks),
                       "logits": torch.stack(logits_all)},
                      os.path.join(d, "greedy.safetensors"))
    except Exception as e:  # noqa: BLE001
        LOG[name] = {"status": "failed", "error": repr(e)[:600], "trace": traceback.format_exc()[-1500:]}
        print(name, "failed", repr(e)[:300], flush=True)


def qwen_1_5b_meta(T):
    """Qwen2.5-1.5B's config through transformers' own class, on the meta device: the IR only
    (prefill of 128 tokens), for compile tests and the H100 bench."""
    name = "hf_qwen2_5_1_5b"
    if ONLY and name not in ONLY:
        return
    try:
        cfg = T.Qwen2Config(vocab_size=151936, hidden_size=1536, intermediate_size=8960,
                            num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                            max_position_embeddings=32768, rope_theta=1000000.0,
                            rms_norm_eps=1e-6, tie_word_embeddings=True)
        with torch.device("meta"):
            m = LMWrap(T.Qwen2ForCausalLM(cfg))
        m.eval()
        with torch.no_grad():
            ir = extract_ir(m, (torch.zeros(1, 128, dtype=torch.long, device="meta"),),
                            model_name=name)
        os.makedirs(os.path.join(OUT, name), exist_ok=True)
        save_ir(ir, os.path.join(OUT, name, "prefill.json"))
        LOG[name] = {"status": "exported", "nodes": len(ir.nodes),
                     "ops": sorted({n.op_type for n in ir.nodes}), "note": "meta, IR only"}
        print(name, "exported", len(ir.nodes), flush=True)
    except Exception as e:  # noqa: BLE001
        LOG[name] = {"status": "failed", "error": repr(e)[:600]}
        print(name, "failed", repr(e)[:300], flush=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    export("unet", UNet(), [img()], torch.float16)
    export("audio_conv1d", AudioNet(), [torch.randn(1, 1, 256)], torch.float16)
    for part in (torchvision_zoo, transformers_zoo):
        try:
            part()
        except Exception as e:  # noqa: BLE001
            LOG[part.__name__] = {"status": "failed", "error": repr(e)[:600],
                                  "trace": traceback.format_exc()[-1500:]}
    import torchvision
    import transformers
    LOG["_versions"] = {"torch": torch.__version__, "torchvision": torchvision.__version__,
                        "transformers": transformers.__version__}
    with open(os.path.join(OUT, "zoo.json"), "w") as f:
        json.dump(LOG, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
