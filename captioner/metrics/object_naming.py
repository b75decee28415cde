"""Whether a text names an ImageNet class: the measure of open-world captioning and of object
answers (issue 38) on the ImageNet sample photos. A caption or an answer names the photo's class
when it holds one of the class's WordNet lemmas, its name, or a hypernym of it ("fish" for a tench,
"dog" for a golden retriever), plural forms included; the generic hypernyms below ("animal",
"device", "food") name nothing in particular and do not count.
"""

from __future__ import annotations

__all__ = ["GENERIC", "GROUPS", "coarse_group", "mentions", "naming_words"]

# WordNet hypernyms that name nothing in particular: a caption saying "an animal" or "a device"
# does not name a tabby or a hair dryer
GENERIC = frozenset(w.replace("_", " ") for w in """
entity physical_entity object physical_object whole unit artifact artefact organism being living_thing
animate_thing animal animate_being beast brute creature fauna person individual someone somebody mortal soul
device container instrumentality instrumentation structure construction thing matter substance material stuff
food nutrient solid_food foodstuff food_product covering commodity goods consumer_goods equipment implement
article abstraction part piece component component_part constituent vertebrate craniate chordate invertebrate
plant flora plant_life natural_object geological_formation formation place location area region vehicle
conveyance transport way system mechanism machine fluid liquid solid produce
""".split())

# coarse groups, by the first of these words on a class's hypernym chain (else "other artifact")
GROUPS = [("dog", "dog"), ("bird", "bird"), ("mammal", "other mammal"), ("fish", "fish, reptile, amphibian"),
          ("reptile", "fish, reptile, amphibian"), ("amphibian", "fish, reptile, amphibian"),
          ("invertebrate", "invertebrate"), ("food", "food, plant"), ("plant", "food, plant"),
          ("conveyance", "vehicle"), ("clothing", "clothing"), ("device", "device, instrument"),
          ("instrument", "device, instrument"), ("container", "container"), ("structure", "structure")]


def coarse_group(entry):
    chain = [w for level in entry["hypernyms"] for w in level]
    return next((group for word, group in GROUPS if word in chain), "other")


def naming_words(entry):
    """The words that name the class: its lemmas and name, and its hypernyms but the GENERIC ones."""
    words = set(entry["lemmas"]) | {entry["name"].lower()} | {w for level in entry["hypernyms"] for w in level}
    return {w for w in words if w not in GENERIC}


def mentions(text, entry):
    """Whether `text` names the class (a lemma or its name) or a non-generic hypernym of it."""
    padded = f" {text.lower()} "
    return any(f" {w} " in padded or f" {w}s " in padded or f" {w}es " in padded for w in naming_words(entry))
