// The bot page: draw the rating history (kept out of the template for the CSP).
import { drawRatingChart } from "./ratingchart.js";

const data = document.getElementById("rating-history");
const history = data ? JSON.parse(data.textContent) : [];
if (history.length) drawRatingChart(document.getElementById("rating-chart"), history);
