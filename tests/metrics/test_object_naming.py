"""Whether a caption or an answer names an ImageNet class (captioner.metrics.object_naming)."""

from captioner.metrics.object_naming import coarse_group, mentions, naming_words
from captioner.tagging.object_tagger import imagenet_classes

TENCH, GOLDEN, ESPRESSO = 0, 207, 967


def test_a_class_is_named_by_its_lemmas_name_or_specific_hypernyms_not_generic_ones():
    tench, golden, espresso = (imagenet_classes()[i] for i in (TENCH, GOLDEN, ESPRESSO))
    assert mentions("a fish in a net", tench) and mentions("two tenches", tench)
    assert mentions("a golden retriever runs", golden) and mentions("the dogs play", golden)
    assert mentions("a cup of espresso", espresso) and mentions("coffee", espresso)
    assert not mentions("an animal in the water", tench)  # generic
    assert not mentions("a catfish", tench)  # whole words only
    assert "animal" not in naming_words(golden) and "dog" in naming_words(golden)
    assert coarse_group(golden) == "dog" and coarse_group(tench) == "fish, reptile, amphibian"
