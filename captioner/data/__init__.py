"""Readers for public caption datasets, returning :class:`CaptionDataset`."""

from captioner.data.caption_dataset import CaptionDataset
from captioner.data.coco import KARPATHY_SPLITS, load_coco_karpathy
from captioner.data.flickr8k import load_flickr8k, read_flickr8k_captions
from captioner.data.headlines import HeadlineCorpus, HeadlinePair, load_bbc_headlines, split_bbc_headlines
from captioner.data.news_category import load_news_category, split_news_category

__all__ = ["CaptionDataset", "load_flickr8k", "read_flickr8k_captions", "load_coco_karpathy", "KARPATHY_SPLITS",
           "HeadlinePair", "HeadlineCorpus", "load_bbc_headlines", "split_bbc_headlines",
           "load_news_category", "split_news_category"]
