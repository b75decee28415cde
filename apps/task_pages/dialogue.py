"""Dialogue page: chat with the hierarchical dialogue model (SGD: restaurants, flights, hotels,
events ...) and see which earlier turns each answer attended to.

The model is the bundled SGD model, or the file named by CAPTIONER_DIALOGUE_MODEL. It reads the
last few turns (as many as it was trained on): each becomes a vector by the word-level GRU and
word attention, a turn-level GRU runs over them, and the decoder attends over the turns while
it writes the answer.
"""

import numpy as np
import streamlit as st

from captioner.errors import InputError

import common

SPEC = common.MODELS["dialogue"]
MAX_CHARS = 500

st.title("Chat with the dialogue model")
st.caption("A hierarchical encoder (a GRU over each turn's words, a GRU over the turns) and an attention decoder, "
           "trained on the Schema-Guided Dialogue data: booking restaurants, flights, hotels, events. "
           "Under each answer: how much it attended to each earlier turn.")

st.session_state.setdefault("dialogue_turns", [])  # [(speaker, text, attention over the turns read or None)]
if st.button("New dialogue", key="dialogue_reset"):
    st.session_state["dialogue_turns"] = []

loaded = common.model_or_explain(SPEC, "to answer", kinds=("DialogueResponder",))
if loaded is None:
    st.stop()
model, model_lock = loaded

text = st.chat_input("Your turn (USER)", key="dialogue_input", max_chars=MAX_CHARS)
turns = st.session_state["dialogue_turns"]
if text and text.strip():
    context = [(s, t) for s, t, _ in turns] + [("USER", text.strip())]
    try:
        with st.spinner("Answering ..."), model_lock:
            r = model.respond([context])[0]
    except InputError as exc:
        st.error(f"Cannot answer this: {exc}", icon=":material/error:")
        st.stop()
    turns.append(("USER", text.strip(), None))
    turns.append(("SYSTEM", r.text, np.asarray(r.turn_attention).mean(0).tolist()))

for i, (speaker, utterance, attention) in enumerate(turns):
    with st.chat_message("user" if speaker == "USER" else "assistant"):
        st.markdown(utterance)
        if attention:
            read = turns[max(0, i - len(attention)):i]
            common.probability_bars({f"{j + 1}. {s}: {t[:50]}": a for j, ((s, t, _), a) in enumerate(zip(read, attention))},
                                    "turn", height=40 + 25 * len(attention), sort=False)
if not turns:
    st.info("Say what you want to book, e.g. “I want to book a table for two in San Jose tonight.”")
common.model_card_expander(SPEC)
