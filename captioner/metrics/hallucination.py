"""Object hallucination of captions: CHAIR (Rohrbach et al. 2018, "Object Hallucination in Image
Captioning").

An object word a caption names is *hallucinated* when none of the image's reference captions
names that object (any of its synonyms). Rohrbach et al. score COCO's 80 object categories
with their synonym lists; Flickr8k has no such annotation, so the objects here are the
concrete nouns people and animals, things and vehicles that Flickr8k captions name, grouped
by synonym (written out below: a "bike" is a "bicycle", a "puppy" a "dog"). Two figures:

* CHAIR-i: hallucinated object mentions / all object mentions (each object counted once per
  caption);
* CHAIR-s: captions with at least one hallucinated object / all captions.

Words are matched on the lower-cased, punctuation-free tokens (``captioner.text.tokenize``),
plural forms included ("dogs"). Lower is better.
"""

from __future__ import annotations

from captioner.text.tokenizer import tokenize

# object -> the words that name it (the first is the object's own name)
OBJECT_SYNONYMS = {
    "man": ["man", "men", "guy", "gentleman"],
    "woman": ["woman", "women", "lady", "ladies"],
    "boy": ["boy", "boys"],
    "girl": ["girl", "girls"],
    "child": ["child", "children", "kid", "kids", "toddler", "baby", "infant"],
    "person": ["person", "people", "persons", "crowd"],
    "player": ["player", "players", "athlete"],
    "dog": ["dog", "dogs", "puppy", "puppies", "terrier", "poodle", "retriever", "collie", "shepherd", "hound", "pup"],
    "cat": ["cat", "cats", "kitten", "kitty"],
    "horse": ["horse", "horses", "pony", "ponies"],
    "cow": ["cow", "cows", "cattle", "bull", "calf"],
    "sheep": ["sheep", "lamb"],
    "bird": ["bird", "birds", "duck", "ducks", "goose", "geese", "seagull", "gull", "pigeon", "swan", "parrot"],
    "fish": ["fish", "fishes"],
    "animal": ["animal", "animals"],
    "bicycle": ["bicycle", "bicycles", "bike", "bikes", "cyclist", "biker"],
    "motorcycle": ["motorcycle", "motorcycles", "motorbike", "dirtbike", "motocross"],
    "car": ["car", "cars", "vehicle", "jeep", "suv"],
    "truck": ["truck", "trucks"],
    "bus": ["bus", "buses"],
    "train": ["train", "trains"],
    "boat": ["boat", "boats", "canoe", "kayak", "raft", "ship", "sailboat"],
    "airplane": ["airplane", "plane", "jet", "aircraft"],
    "ball": ["ball", "balls", "football", "basketball", "soccer", "volleyball", "baseball", "tennis"],
    "frisbee": ["frisbee"],
    "skateboard": ["skateboard", "skateboarder", "skateboarding"],
    "surfboard": ["surfboard", "surfer", "surfing"],
    "ski": ["ski", "skis", "skier", "skiing"],
    "snowboard": ["snowboard", "snowboarder", "snowboarding"],
    "bench": ["bench", "benches"],
    "chair": ["chair", "chairs"],
    "table": ["table", "tables"],
    "bed": ["bed", "beds"],
    "couch": ["couch", "sofa"],
    "tree": ["tree", "trees"],
    "flower": ["flower", "flowers"],
    "rock": ["rock", "rocks", "boulder", "cliff"],
    "hat": ["hat", "hats", "cap", "helmet"],
    "shirt": ["shirt", "shirts", "t-shirt", "tshirt"],
    "jacket": ["jacket", "jackets", "coat"],
    "dress": ["dress", "dresses"],
    "glasses": ["glasses", "sunglasses"],
    "bag": ["bag", "bags", "backpack", "purse"],
    "umbrella": ["umbrella", "umbrellas"],
    "stick": ["stick", "sticks", "branch"],
    "toy": ["toy", "toys"],
    "rope": ["rope"],
    "fence": ["fence"],
    "building": ["building", "buildings", "house", "houses", "skyscraper"],
    "tent": ["tent", "tents"],
    "guitar": ["guitar", "guitars", "guitarist"],
    "microphone": ["microphone", "mic"],
    "camera": ["camera", "cameras"],
    "phone": ["phone", "cellphone"],
    "book": ["book", "books"],
    "cup": ["cup", "cups", "mug"],
    "bottle": ["bottle", "bottles"],
    "food": ["food", "pizza", "sandwich", "cake"],
    "sign": ["sign", "signs"],
    "flag": ["flag", "flags"],
    "kite": ["kite", "kites"],
    "pool": ["pool"],
    "swing": ["swing", "swings"],
    "slide": ["slide"],
    "stroller": ["stroller"],
    "wheelchair": ["wheelchair"],
}

_WORD_TO_OBJECT = {w: obj for obj, words in OBJECT_SYNONYMS.items() for w in words}


def caption_objects(text):
    """The objects (OBJECT_SYNONYMS keys) a caption names, in order of first mention."""
    out = []
    for token in tokenize(text):
        obj = _WORD_TO_OBJECT.get(token)
        if obj is None and token.endswith("s"):
            obj = _WORD_TO_OBJECT.get(token[:-1])
        if obj is not None and obj not in out:
            out.append(obj)
    return out


def chair(references, candidates):
    """CHAIR of ``candidates`` {image: caption} against ``references`` {image: [captions]}.

    Returns {"CHAIR_i", "CHAIR_s" (percent), "mentions", "hallucinated", "captions",
    "most_hallucinated": [(object, count)] (the ten most frequent)}."""
    mentions = hallucinated = bad_captions = 0
    counts = {}
    for image, caption in candidates.items():
        named = set()
        for ref in references[image]:
            named.update(caption_objects(ref))
        wrong = [obj for obj in caption_objects(caption) if obj not in named]
        mentions += len(caption_objects(caption))
        hallucinated += len(wrong)
        bad_captions += bool(wrong)
        for obj in wrong:
            counts[obj] = counts.get(obj, 0) + 1
    n = max(len(candidates), 1)
    return {"CHAIR_i": round(100.0 * hallucinated / max(mentions, 1), 2), "CHAIR_s": round(100.0 * bad_captions / n, 2),
            "mentions": mentions, "hallucinated": hallucinated, "captions": len(candidates),
            "most_hallucinated": sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]}
