"""Object tags from the backbone's own ImageNet classifier, mapped through WordNet to words a
caption can use (issue 38): see :class:`captioner.tagging.object_tagger.ObjectTagger`."""

from captioner.tagging.object_tagger import ObjectTagger, Tag, name_objects

__all__ = ["ObjectTagger", "Tag", "name_objects"]
