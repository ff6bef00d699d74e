"""lm.pretrained: tiny random Llama and Qwen3-VL configs saved and loaded by path, offline."""

import pytest
import torch

from icml26_lit.lm import PretrainedLM, load_pretrained, token_logprobs

transformers = pytest.importorskip("transformers")


def _check(path, V):
    m = load_pretrained(str(path))
    assert isinstance(m, PretrainedLM) and m.head_weight.shape == (V, 32)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, V, (2, 7), generator=g)
    tgt = torch.randint(0, V, (2, 7), generator=g)
    tgt[0, :2] = -100
    with torch.no_grad():
        logits = m.model(input_ids=ids).logits  # the model's own head
        want = torch.log_softmax(logits.float(), -1).gather(-1, tgt.clamp(min=0)[..., None])[..., 0]
        want[0, :2] = 0
        got = m.token_logprobs(tgt, ids=ids)
        got_e = token_logprobs(m.hidden(embeds=m.embed(ids)), m.head_weight, tgt)
    # fp32, d = 32, V < 128: the same products summed in another order, 1e-5 is ample
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got_e, want, atol=1e-5, rtol=1e-5)


def test_tiny_llama_by_path(tmp_path):
    cfg = transformers.LlamaConfig(
        vocab_size=101,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).save_pretrained(tmp_path)
    _check(tmp_path, 101)


def test_tiny_qwen3_vl_by_path(tmp_path):
    text = dict(
        vocab_size=97,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        rope_scaling=dict(rope_type="default", mrope_section=[1, 1, 2]),
    )
    vision = dict(
        depth=1,
        hidden_size=32,
        intermediate_size=64,
        num_heads=4,
        out_hidden_size=32,
        deepstack_visual_indexes=[],
    )
    cfg = transformers.Qwen3VLConfig(text_config=text, vision_config=vision)
    torch.manual_seed(0)
    transformers.Qwen3VLForConditionalGeneration(cfg).save_pretrained(tmp_path)
    _check(tmp_path, 97)


def test_missing_path_is_an_error(tmp_path):
    with pytest.raises(OSError):
        load_pretrained(str(tmp_path / "nothing"))
    with pytest.raises(TypeError, match="name"):
        load_pretrained(None)
