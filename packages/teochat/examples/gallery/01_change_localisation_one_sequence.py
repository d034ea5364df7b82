# %% [markdown]
# # What TEOChat sees and answers: one dated sequence
# A generated site is stored as frames in shuffled order with their dates; TEOChat sorts them chronologically,
# refers to each as `image i :` and answers "identify the buildings that changed ." with boxes. The figure shows
# the frames in date order and, on the last one, the true changed buildings beside the shipped checkpoint's boxes
# (the first construction or demolition site with three or more frames, not a chosen success).

# %%
import numpy as np
import torch
from matplotlib.patches import Rectangle

from iclr25.teochat import generate_sequences, load_pretrained, make_examples, parse_boxes, pixel_f1
from iclr25.utils.plotting import show, subplots

torch.set_num_threads(1)
seqs = generate_sequences(24, seed=3, scenes=("construction_site", "demolition_site"))
loc = make_examples(seqs, tasks=["loc"], seed=3)
ex = next(e for e in loc if seqs[e.seq].n_frames >= 3 and e.boxes)
seq = seqs[ex.seq]
answer = load_pretrained("temporal").predict([ex], seqs)[0]
print(f"{seq.scene}: stored dates {list(seq.dates)} -> chronological order {seq.order.tolist()}")
print(f"Q: {ex.question}\ntrue:    {ex.answer}\nTEOChat: {answer}")
print(f"pixel F1 on this question: {pixel_f1([answer], [ex.boxes]).f1:.2f}")

# %%
frames = seq.chronological()
dates = np.array(seq.dates)[seq.order]
fig, ax = subplots(1, len(frames) + 1, size=(2.2, 2.5), layout="constrained")
for i, (a, img) in enumerate(zip(ax, frames)):
    a.imshow(img, interpolation="nearest")
    a.set_title(f"image {i + 1}: {dates[i]}", fontsize=9)
    a.axis("off")
last = ax[-1]
last.imshow(frames[-1], interpolation="nearest")
scale = seq.size / 100  # boxes are in percent of the frame


def draw(boxes, color, style, label):
    for k, (x1, y1, x2, y2) in enumerate(boxes):
        last.add_patch(Rectangle((x1 * scale - 0.5, y1 * scale - 0.5), (x2 - x1) * scale, (y2 - y1) * scale,
                                 fill=False, edgecolor=color, ls=style, lw=2, label=label if k == 0 else None))


draw(ex.boxes, "lime", "-", "changed (truth)")
draw(parse_boxes(answer).boxes, "red", "--", "TEOChat's answer")
last.set_title("last image: answer", fontsize=9)
last.axis("off")
last.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.02))
fig.suptitle(f"Change localisation on a {seq.scene.replace('_', ' ')} ({seq.size} px frames, sorted by date)")
show(fig)
