"""Readers for public caption datasets, returning :class:`CaptionDataset`."""

from captioner.data.bbc_news import load_bbc_news
from captioner.data.caption_dataset import CaptionDataset
from captioner.data.coco import KARPATHY_SPLITS, load_coco_karpathy
from captioner.data.documents import Document, to_hierarchy
from captioner.data.flickr8k import load_flickr8k, read_flickr8k_captions
from captioner.data.newsgroups import load_newsgroups

__all__ = [
           "KARPATHY_SPLITS",
           "CaptionDataset",
           "Document",
           "load_bbc_news",
           "load_coco_karpathy",
           "load_flickr8k",
           "load_newsgroups",
           "read_flickr8k_captions",
           "to_hierarchy",
]
