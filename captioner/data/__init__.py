"""Readers for public datasets: captions, documents, headlines."""

from captioner.data.bbc_news import load_bbc_news
from captioner.data.caption_dataset import CaptionDataset
from captioner.data.coco import KARPATHY_SPLITS, load_coco_karpathy
from captioner.data.documents import Document, to_hierarchy
from captioner.data.flickr8k import load_flickr8k, read_flickr8k_captions
from captioner.data.img2dataset import load_img2dataset
from captioner.data.headlines import HeadlineCorpus, HeadlinePair, load_bbc_headlines, split_bbc_headlines
from captioner.data.news_category import load_news_category, split_news_category
from captioner.data.newsgroups import load_newsgroups

__all__ = [
    "KARPATHY_SPLITS",
    "CaptionDataset",
    "Document",
    "HeadlineCorpus",
    "HeadlinePair",
    "load_bbc_headlines",
    "load_bbc_news",
    "load_coco_karpathy",
    "load_flickr8k",
    "load_img2dataset",
    "load_news_category",
    "load_newsgroups",
    "read_flickr8k_captions",
    "split_bbc_headlines",
    "split_news_category",
    "to_hierarchy",
]
